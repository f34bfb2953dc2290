#pragma once
// Okapi BM25 scores of queries against every document of an index, from its term postings
// (lcrwmd/index.h's lexical part): what bm25 ranks by and hybrid fuses with a distance.
#include <cstddef>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

class Bm25Scorer {
 public:
  // An Error where the index keeps no terms, or the queries carry none (made by hand, not read
  // from text) or no collection-wide statistics (shards built apart under mpirun).
  Bm25Scorer(const Index& index, const QuerySet& queries, double k1, double b);
  // score[i] for query q and the documents i in [begin, end): its terms in their (sorted)
  // order, each term's postings in document order, so the same sums come in the same order
  // however queries are batched and documents split among threads.
  void score(std::size_t q, double* score, std::size_t begin, std::size_t end) const;
  // f(j, row of n_docs scores) for queries first + j, j < count: a query per thread, or one
  // query's documents split among them.
  template <typename F>
  void score_each(std::size_t first, std::size_t count, F&& f) const {
    const std::size_t n = index_.n_docs();
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
  const Index& index_;
  const QueryTerms& terms_;
  double k1_;
  double length_base_ = 0, length_scale_ = 0;  // a document's length part, base + scale * length
};

}  // namespace lcrwmd
