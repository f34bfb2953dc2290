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
  // score[i] (n_docs of them) for query q: its terms in their (sorted) order, each term's
  // postings in document order, so the same sums come in the same order however queries are
  // batched and threads split.
  void score(std::size_t q, std::vector<double>& score) const;
  // f(j, score) for queries first + j, j < count, in parallel (one row of scores per thread).
  template <typename F>
  void score_each(std::size_t first, std::size_t count, F&& f) const {
#pragma omp parallel if (count > 1)
    {
      std::vector<double> row;
#pragma omp for schedule(dynamic)
      for (std::size_t j = 0; j < count; ++j) {
        score(first + j, row);
        f(j, row);
      }
    }
  }

 private:
  const Index& index_;
  const QueryTerms& terms_;
  double k1_;
  std::vector<double> norm_;  // the length part of each document's denominator
};

}  // namespace lcrwmd
