// Linear-complexity ACT-k and ICT, one-sided (lc_act.h), and what both backends take from an
// index for ICT.
#include "methods/act/lc_act.h"

namespace lcrwmd {

std::vector<float> largest_word_weights(const Index& index) {
  const std::size_t v = index.vocab_size(), n = index.n_docs();
  const auto indptr = index.indptr();
  const auto idx = index.indices();
  const auto val = index.values();
  std::vector<float> largest(v, 0.0f);
#pragma omp parallel
  {
    std::vector<float> mine(v, 0.0f);
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p)
        mine[idx[p]] = std::max(mine[idx[p]], val[p]);
#pragma omp critical
    for (std::size_t u = 0; u < v; ++u) largest[u] = std::max(largest[u], mine[u]);
  }
  return largest;
}

std::unique_ptr<BatchDistance> make_lc_act(const Index& index, QueryRange queries,
                                           std::size_t steps, const Phase1& phase1) {
  return std::make_unique<act::LcAct>(index, queries, steps, phase1);
}

}  // namespace lcrwmd
