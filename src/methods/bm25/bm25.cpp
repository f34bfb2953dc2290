// bm25: Okapi BM25 (methods/bm25/bm25.h), each query's row of scores given as distances (minus the
// scores), so that it ranks through the same top-k as every method.
#include "methods/bm25/bm25.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "lcrwmd/error.h"
#include "lcrwmd/topk.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"
#include "util/parallel_errors.h"

namespace lcrwmd {

Bm25Scorer::Bm25Scorer(const Index& index, const QuerySet& queries, std::size_t begin,
                       std::size_t end, double k1, double b, std::span<const std::uint32_t> skip)
    : Bm25Scorer({{&index, 0, skip}}, queries, begin, end, k1, b,
                 [&index](std::string_view term, std::span<std::uint32_t> ids) {
                   ids[0] = index.find_term(term).value_or(SegmentSet::kNoTerm);
                 }) {}

Bm25Scorer::Bm25Scorer(const SegmentSet& shards, const QuerySet& queries, std::size_t begin,
                       std::size_t end, double k1, double b)
    : Bm25Scorer(
          [&] {
            std::vector<Part> parts;
            std::size_t first = 0;
            for (std::size_t s = 0; s < shards.size(); ++s) {
              parts.push_back({&shards.segment(s), first, shards.deleted(s)});
              first += shards.segment(s).n_docs();
            }
            return parts;
          }(),
          queries, begin, end, k1, b,
          [&shards](std::string_view term, std::span<std::uint32_t> ids) {
            shards.find_term(term, ids);
          }) {}

Bm25Scorer::Bm25Scorer(std::vector<Part> parts, const QuerySet& queries, std::size_t begin,
                       std::size_t end, double k1, double b, const TermFinder& find)
    : parts_(std::move(parts)), terms_(queries.terms), k1_(k1) {
  for (const Part& part : parts_) {
    if (!part.index->has_terms())
      throw Error(part.index->source() +
                  ": the index holds no term counts (assembled without them): bm25 reads an "
                  "index from `lcrwmd build` or `lcrwmd synth`");
    n_ = std::max(n_, part.first + part.index->n_docs());
  }
  const QueryTerms& t = terms_;
  if (t.indptr.size() != queries.size() + 1 || t.counts.size() != t.terms.size())
    throw Error(
        "bm25 reads the queries' terms, and these have none: queries made by hand rather than "
        "from text (make_query_set)");
  if (t.idf.size() != t.terms.size() || !(t.mean_length > 0))
    throw Error(
        "bm25: these queries carry no collection-wide term statistics: read them with the "
        "index or collection searched (make_query_set)");
  // A document's length part, k1 (1 - b + b len / mean): computed per posting read, as a
  // query reads far fewer postings than there are documents (no pass over them all per batch).
  length_scale_ = k1 * b / t.mean_length;
  length_base_ = k1 * (1.0 - b);
  // Each part's ids of the queries' terms, each distinct term of the batch looked up once.
  first_term_ = t.indptr[begin];
  const std::size_t n_terms = t.indptr[end] - first_term_, n_parts = parts_.size();
  const auto term = [&](std::size_t p) -> std::string_view { return t.terms[first_term_ + p]; };
  std::vector<std::size_t> order(n_terms);
  for (std::size_t p = 0; p < n_terms; ++p) order[p] = p;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t c) { return term(a) < term(c); });
  term_ids_.resize(n_terms * n_parts);
  for (std::size_t o = 0; o < n_terms; ++o) {
    const std::span<std::uint32_t> ids(term_ids_.data() + order[o] * n_parts, n_parts);
    if (o > 0 && term(order[o]) == term(order[o - 1]))
      std::copy_n(term_ids_.data() + order[o - 1] * n_parts, n_parts, ids.begin());
    else
      find(term(order[o]), ids);
  }
}

std::pair<std::size_t, std::size_t> Bm25Scorer::locate(std::size_t position) const {
  const auto part = std::upper_bound(parts_.begin(), parts_.end(), position,
                                     [](std::size_t at, const Part& p) { return at < p.first; });
  const auto s = static_cast<std::size_t>(part - parts_.begin()) - 1;
  return {s, position - parts_[s].first};
}

void Bm25Scorer::score(std::size_t q, double* score, std::size_t begin, std::size_t end) const {
  std::fill(score + begin, score + end, 0.0);
  const std::size_t n_parts = parts_.size();
  for (std::size_t s = 0; s < n_parts; ++s) {
    const Index& index = *parts_[s].index;
    const std::size_t first = parts_[s].first;
    // This part's documents within [begin, end), as its own numbers [lo, stop).
    const std::size_t from = std::max(begin, first), to = std::min(end, first + index.n_docs());
    if (from >= to) continue;
    const std::size_t lo = from - first, stop = to - first;
    double* row = score + first;
    for (std::uint64_t p = terms_.indptr[q]; p < terms_.indptr[q + 1]; ++p) {
      const std::uint32_t id = term_ids_[(p - first_term_) * n_parts + s];
      if (id == SegmentSet::kNoTerm) continue;
      const double w = term_weight(p);
      PostingReader post(index.postings(id));
      // The documents before the range passed over (postings are in order), then block by block.
      std::size_t e = lo > 0 ? post.seek(0, post.first() + static_cast<std::uint32_t>(lo)) : 0;
      for (bool more = true; more && e < post.size(); e = post.end()) {
        post.load(e);
        const std::uint32_t* docs = post.docs();
        const std::size_t n = post.end() - post.begin();
        for (std::size_t j = e - post.begin(); j < n; ++j) {
          fetch_length_ahead(index, docs + j, docs + n, post.first());
          const std::size_t i = docs[j] - post.first();
          if (i >= stop) {
            more = false;
            break;
          }
          row[i] += contribution(w, post.counts()[j], index.doc_length(i));
        }
      }
    }
  }
}

double Bm25Scorer::score_of(std::size_t q, std::size_t position) const {
  const auto [s, i] = locate(position);
  const Index& index = *parts_[s].index;
  const std::size_t n_parts = parts_.size();
  double score = 0;
  for (std::uint64_t p = terms_.indptr[q]; p < terms_.indptr[q + 1]; ++p) {
    const std::uint32_t id = term_ids_[(p - first_term_) * n_parts + s];
    if (id == SegmentSet::kNoTerm) continue;
    PostingReader post(index.postings(id));
    const std::uint32_t doc = post.first() + static_cast<std::uint32_t>(i);
    std::size_t e = 0;
    if (post.holds(e, doc))
      score += contribution(term_weight(p), post.count(e), index.doc_length(i));
  }
  return score;
}

std::vector<double> Bm25Scorer::scores_at(std::size_t q,
                                          std::span<const std::uint32_t> positions) const {
  // Each part's positions, each of the query's terms in its order: the term's list galloped
  // through for them (a few postings read per position, not the whole list), each match added
  // to its document's sum, so that every sum is score_of's, term by term from 0.
  std::vector<double> out(positions.size(), 0.0);
  const std::size_t n_parts = parts_.size();
  std::size_t from = 0;
  for (std::size_t s = 0; s < n_parts && from < positions.size(); ++s) {
    const Index& index = *parts_[s].index;
    const std::size_t first = parts_[s].first, stop = first + index.n_docs();
    std::size_t to = from;
    while (to < positions.size() && positions[to] < stop) ++to;
    for (std::uint64_t p = terms_.indptr[q]; p < terms_.indptr[q + 1] && from < to; ++p) {
      const std::uint32_t id = term_ids_[(p - first_term_) * n_parts + s];
      if (id == SegmentSet::kNoTerm) continue;
      const double w = term_weight(p);
      PostingReader post(index.postings(id));
      std::size_t at = 0;
      for (std::size_t t = from; t < to && at < post.size(); ++t) {
        const std::size_t i = positions[t] - first;
        if (post.holds(at, static_cast<std::uint32_t>(post.first() + i)))
          out[t] += contribution(w, post.count(at), index.doc_length(i));
      }
    }
    from = to;
  }
  return out;
}

namespace {

class Bm25 final : public BatchDistance {
 public:
  Bm25(const Index& index, QueryRange q, double k1, double b)
      : n_(index.n_docs()), q_(q), scorer_(index, q.set, q.begin, q.end, k1, b) {}

  void compute(float* out) override {
    scorer_.score_each(q_.begin, q_.size(), [&](std::size_t j, const std::vector<double>& score) {
      float* row = out + j * n_;
      for (std::size_t i = 0; i < n_; ++i) row[i] = bm25_distance(score[i]);
    });
  }

 private:
  std::size_t n_;
  QueryRange q_;
  Bm25Scorer scorer_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_bm25(const Index& index, QueryRange queries, double k1,
                                         double b) {
  return std::make_unique<Bm25>(index, queries, k1, b);
}

Bm25Parameters bm25_parameters(const SearchOptions& o) {
  return {parameter_value(o.method, o.parameters, kBm25K1.name),
          parameter_value(o.method, o.parameters, kBm25B.name)};
}

namespace {

// Each query's k best by the scorer's pruned walk (top_k), queries shared among threads, a
// position of its rows given as the document doc_of names. A query's ceiling is the tighter of
// the search's (options.ceilings: an earlier shard's k-th best) and its range.
template <typename DocOf>
SearchResults walk_top_k(const Bm25Scorer& scorer, std::size_t nq, std::size_t k,
                         const SearchOptions& o, const DocOf& doc_of, SearchStats* stats) {
  SearchResults r = empty_results(nq, k);
  const float range = std::nextafter(o.max_distance, std::numeric_limits<float>::infinity());
  SearchStats st;
  constexpr std::size_t kChunk = 256;  // queries between progress reports
  for (std::size_t first = 0; first < nq; first += kChunk) {
    const std::size_t count = std::min(kChunk, nq - first);
    std::size_t met = 0;
    ParallelErrors errors;
#pragma omp parallel for schedule(dynamic) reduction(+ : met) if (count > 1)
    for (std::size_t q = first; q < first + count; ++q)
      errors.run([&] {
        const float ceiling = o.ceilings.empty() ? range : std::min(range, o.ceilings[q]);
        Bm25Scorer::TopKCounts counts;
        const std::vector<Neighbor> top = scorer.top_k(q, r.k, ceiling, &counts);
        for (std::size_t t = 0; t < top.size(); ++t) {
          r.distances[q * r.k + t] = top[t].distance;
          r.indices[q * r.k + t] = doc_of(static_cast<std::size_t>(top[t].index));
        }
        met += counts.documents;
      });
    errors.rethrow();
    ++st.batches;
    st.distances += met;
    if (o.progress) o.progress(first + count, nq);
  }
  if (stats) *stats = st;
  return r;
}

SearchResults index_top_k(const Index& index, const QuerySet& queries, std::size_t k,
                          const SearchOptions& o, SearchStats* stats) {
  const Bm25Parameters bm25 = bm25_parameters(o);
  const std::size_t nq = queries.size();
  const Bm25Scorer scorer(index, queries, 0, nq, bm25.k1, bm25.b, o.skip);
  return walk_top_k(
      scorer, nq, std::min(k, index.n_docs()), o,
      [](std::size_t i) { return static_cast<std::int64_t>(i); }, stats);
}

// bm25 over every segment's postings at once, a row's positions running through them in order
// with their deleted documents left out, as one index of the live documents ranks them (the
// same bytes: each document's sum reads its own terms in the same order). Segment after
// segment, each would look every query term up again and run its own walk and top-k
// (BENCHMARKS.md, "Collections that change").
SearchResults segments_top_k(const SegmentSet& shards, const QuerySet& queries, std::size_t k,
                             const SearchOptions& o, SearchStats* stats) {
  const Bm25Parameters bm25 = bm25_parameters(o);
  const std::size_t nq = queries.size();
  const Bm25Scorer scorer(shards, queries, 0, nq, bm25.k1, bm25.b);
  return walk_top_k(
      scorer, nq, std::min(k, shards.n_docs()), o,
      [&](std::size_t position) {
        const auto [s, i] = scorer.locate(position);
        return static_cast<std::int64_t>(shards.collection_doc(s, i));
      },
      stats);
}

constexpr Parameter kBm25Parameters[] = {kBm25K1, kBm25B};
constexpr MethodImpl kBm25Impl{.cpu = {.make =
                                           [](const MethodContext& c) {
                                             const Bm25Parameters p = bm25_parameters(c.options);
                                             return make_bm25(c.index, c.queries, p.k1, p.b);
                                           },
                                       .top_k = index_top_k},
                               .segments = {.top_k = segments_top_k}};
}  // namespace

extern constinit const MethodInfo kBm25Method{
    .name = "bm25",
    .summary =
        "Okapi BM25 (k1 = bm25_k1, b = bm25_b) over the documents' terms, with a vector or "
        "without; its distance is minus its score (front ends show the score), and only "
        "documents sharing a term are found; the default for typed text",
    .symmetric = false,
    .query_to_document = true,
    .vectors = false,
    .needs = Needs::term_statistics,
    .answer = Answer::score,
    .parameters = kBm25Parameters,
    .default_for = QueryKind::text,
    .impl = &kBm25Impl};

}  // namespace lcrwmd
