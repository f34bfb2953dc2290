// Quadratic RWMD (Kusner et al. 2015): per pair, every word-to-word distance, then row and
// column minima. O(h^2 m) per pair: the reference every fast path is tested against, and the
// baseline LC-RWMD is measured against.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/distance_kernels.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

RwmdPair rwmd_pair(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q) {
  const std::size_t m = index.dim();
  const auto indptr = index.indptr();
  const std::size_t db = indptr[doc], dh = indptr[doc + 1] - db;
  const std::size_t qb = qs.indptr[q], qh = qs.length(q);
  constexpr float inf = std::numeric_limits<float>::infinity();
  thread_local std::vector<float> row_min, col_min;
  row_min.assign(dh, inf);
  col_min.assign(qh, inf);
  for (std::size_t p = 0; p < dh; ++p) {
    const float* e = index.vector(index.indices()[db + p]);
    for (std::size_t t = 0; t < qh; ++t) {
      const float d = cpu::sq_dist(e, query_word_vector(index, qs, qs.words[qb + t]), m);
      row_min[p] = std::min(row_min[p], d);
      col_min[t] = std::min(col_min[t], d);
    }
  }
  double d1 = 0, d2 = 0;
  for (std::size_t p = 0; p < dh; ++p) d1 += index.values()[db + p] * std::sqrt(double{row_min[p]});
  for (std::size_t t = 0; t < qh; ++t) d2 += qs.weights[qb + t] * std::sqrt(double{col_min[t]});
  return {static_cast<float>(d1), static_cast<float>(d2)};
}

namespace {

class QuadraticRwmd final : public BatchDistance {
 public:
  QuadraticRwmd(const Index& index, QueryRange q, bool symmetric)
      : index_(index), q_(q), symmetric_(symmetric) {}

  void compute(float* out) override {
    const std::size_t n = index_.n_docs(), nq = q_.size();
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < nq; ++j) {
        const RwmdPair r = rwmd_pair(index_, i, q_.set, q_.begin + j);
        out[j * n + i] = symmetric_ ? std::max(r.d1, r.d2) : r.d1;
      }
  }

 private:
  const Index& index_;
  QueryRange q_;
  bool symmetric_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_quadratic_rwmd(const Index& index, QueryRange queries,
                                                   bool symmetric) {
  return std::make_unique<QuadraticRwmd>(index, queries, symmetric);
}

}  // namespace lcrwmd
