#pragma once
// Okapi BM25 scores of queries against every document of an index (or of a collection's
// indexes together), from its term postings (lcrwmd/index.h's lexical part): what bm25 ranks
// by and hybrid fuses with a distance.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/posting_blocks.h"
#include "core/posting_reader.h"
#include "lcrwmd/index.h"
#include "lcrwmd/method.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/topk.h"

namespace lcrwmd {

// bm25's parameters, described once: bm25 and the hybrid (whose lexical half it is) read both.
inline constexpr Parameter kBm25K1{.name = "bm25_k1",
                                   .kind = Parameter::Kind::number,
                                   .default_value = 1.2,
                                   .min = 0,
                                   .max = std::numeric_limits<double>::infinity(),
                                   .help = "term frequency saturation, k1 >= 0"};
inline constexpr Parameter kBm25B{.name = "bm25_b",
                                  .kind = Parameter::Kind::number,
                                  .default_value = 0.75,
                                  .min = 0,
                                  .max = 1,
                                  .help = "document length normalisation, b in [0, 1]"};
struct Bm25Parameters {
  double k1, b;
};
// Those of a search whose method has them (bm25, hybrid).
Bm25Parameters bm25_parameters(const SearchOptions& o);

// A score as the distance bm25 ranks by: its negation, 0 for a document sharing no term.
inline float bm25_distance(double score) { return score > 0 ? -static_cast<float>(score) : 0.0f; }

// Postings ahead of the one scored whose documents' lengths a list's walk fetches: the lengths
// of a list's documents lie far apart, each a miss to memory where it is not on its way
// (BENCHMARKS.md; 48 ahead was slower).
inline constexpr std::size_t kLengthsAhead = 16;
// Fetches the length of the document kLengthsAhead postings past `doc`, in a list ending at
// `end` whose number for the index's document 0 is `first`, where there is one.
inline void fetch_length_ahead(const Index& index, const std::uint32_t* doc,
                               const std::uint32_t* end, std::uint32_t first) {
  if (end - doc > static_cast<std::ptrdiff_t>(kLengthsAhead))
    __builtin_prefetch(index.doc_lengths() + (doc[kLengthsAhead] - first));
}

class Bm25Scorer {
 public:
  // Queries [begin, end) of `queries`; top_k leaves out the documents `skip` (ascending). An
  // Error where the index keeps no terms, or the queries carry none (made by hand, not read
  // from text) or no collection-wide statistics.
  Bm25Scorer(const Index& index, const QuerySet& queries, std::size_t begin, std::size_t end,
             double k1, double b, std::span<const std::uint32_t> skip = {});
  // The same over a collection's shards, their documents one after another in each row (the
  // deleted ones too: score's caller leaves them out, top_k does), the queries' statistics
  // being the collection's: each document's score the bytes one index of them all gives it.
  Bm25Scorer(const SegmentSet& shards, const QuerySet& queries, std::size_t begin, std::size_t end,
             double k1, double b);
  // A row's length: the documents of every index scored.
  std::size_t n_docs() const { return n_; }
  // Index s's (a shard's) first position in a row; and the index and document a position is.
  std::size_t first(std::size_t s) const { return parts_[s].first; }
  std::pair<std::size_t, std::size_t> locate(std::size_t position) const;
  // score[i] for query q and the documents i in [begin, end): its terms in their (sorted)
  // order, each term's postings in document order, so the same sums come in the same order
  // however queries are batched and documents split among threads or indexes.
  void score(std::size_t q, double* score, std::size_t begin, std::size_t end) const;
  // Query q's score of the document at `position`: score()'s bits, from each term's postings
  // searched for it.
  double score_of(std::size_t q, std::size_t position) const;
  // Query q's scores of the documents at `positions` (ascending): score_of's bits, each term's
  // postings searched for them in one pass (the hybrid's sample).
  std::vector<double> scores_at(std::size_t q, std::span<const std::uint32_t> positions) const;
  // Query q's k best documents (positions in a row), best first, ties to the earlier one: what
  // score's rows would rank, the same scores, reading only the postings that can matter
  // (block-max MaxScore over each part's blocks, core/posting_blocks.h). Only documents sharing
  // a term with the query and whose distance (bm25_distance) is below `ceiling` are found.
  // blocks_of: where the blocks of part s's term come from, if not from its index (which keeps
  // them; the tests' awkward sizes and sabotaged bounds).
  struct TopKCounts {
    std::size_t documents = 0;  // documents met on a list that could carry them into the top-k
    std::size_t scored = 0;     // of them, those scored in full
  };
  using BlocksOf = std::function<const PostingBlocks&(std::size_t part, std::uint32_t term)>;
  std::vector<Neighbor> top_k(std::size_t q, std::size_t k, float ceiling,
                              TopKCounts* counts = nullptr, const BlocksOf& blocks_of = {}) const;
  // What one of a query's terms adds to a document's score: its weight w (term_weight) times
  // the saturated count. top_k's bounds are made of the same arithmetic.
  double term_weight(std::uint64_t p) const {
    return static_cast<double>(terms_.counts[p]) * terms_.idf[p] * (k1_ + 1.0);
  }
  double contribution(double w, std::uint32_t count, std::uint32_t length) const {
    const double f = count;
    return w * f / (f + (length_base_ + length_scale_ * length));
  }
  // f(j, row of n_docs() scores) for queries first + j, j < count: a query per thread, or one
  // query's documents split among them.
  template <typename F>
  void score_each(std::size_t first, std::size_t count, F&& f) const {
    const std::size_t n = n_;
    if (count == 1) {
      std::vector<double> row(n);
      constexpr std::size_t kSlices = 64;
#pragma omp parallel for schedule(dynamic)
      for (std::size_t s = 0; s < kSlices; ++s)
        score(first, row.data(), n * s / kSlices, n * (s + 1) / kSlices);
      f(0, row);
      return;
    }
#pragma omp parallel
    {
      std::vector<double> row(n);
#pragma omp for schedule(dynamic)
      for (std::size_t j = 0; j < count; ++j) {
        score(first + j, row.data(), 0, n);
        f(j, row);
      }
    }
  }

 private:
  struct Part {
    const Index* index;
    std::size_t first;                       // its documents' first position in a row
    std::span<const std::uint32_t> deleted;  // its own numbers, ascending
  };
  // Each part's ids of a term (SegmentSet::kNoTerm where it has none).
  using TermFinder = std::function<void(std::string_view, std::span<std::uint32_t>)>;
  Bm25Scorer(std::vector<Part> parts, const QuerySet& queries, std::size_t begin, std::size_t end,
             double k1, double b, const TermFinder& find);

  std::vector<Part> parts_;
  std::size_t n_ = 0;
  const QueryTerms& terms_;
  std::uint64_t first_term_;  // the first term of query `begin`
  // The id of each of the queries' terms in each part ([term * parts + part]), looked up once
  // per distinct term of the batch, not per slice of documents.
  std::vector<std::uint32_t> term_ids_;
  double k1_;
  double length_base_ = 0, length_scale_ = 0;  // a document's length part, base + scale * length
};

}  // namespace lcrwmd
