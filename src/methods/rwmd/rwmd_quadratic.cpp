// Quadratic RWMD (Kusner et al. 2015): per pair, every word-to-word distance, then row and
// column minima. O(h^2 m) per pair: the reference every fast path is tested against, and the
// baseline LC-RWMD is measured against.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/distance_kernels.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"
#include "methods/pair_distances.h"

namespace lcrwmd {

void pair_nearest(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                  PairNearest& out) {
  const std::size_t m = index.dim();
  const auto indptr = index.indptr();
  const std::size_t db = indptr[doc], dh = indptr[doc + 1] - db;
  const std::size_t qb = qs.indptr[q], qh = qs.length(q);
  constexpr float inf = std::numeric_limits<float>::infinity();
  out.row_min.assign(dh, inf);
  out.col_min.assign(qh, inf);
  out.row_arg.assign(dh, 0);
  out.col_arg.assign(qh, 0);
  for (std::size_t p = 0; p < dh; ++p) {
    const float* e = index.vector(index.indices()[db + p]);
    for (std::size_t t = 0; t < qh; ++t) {
      const float d = cpu::sq_dist(e, query_word_vector(index, qs, qs.words[qb + t]), m);
      if (d < out.row_min[p]) out.row_min[p] = d, out.row_arg[p] = t;
      if (d < out.col_min[t]) out.col_min[t] = d, out.col_arg[t] = p;
    }
  }
}

RwmdPair rwmd_pair(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q) {
  thread_local PairNearest near;
  pair_nearest(index, doc, qs, q, near);
  const std::size_t db = index.indptr()[doc], qb = qs.indptr[q];
  double d1 = 0, d2 = 0;
  for (std::size_t p = 0; p < near.row_min.size(); ++p)
    d1 += index.values()[db + p] * std::sqrt(double{near.row_min[p]});
  for (std::size_t t = 0; t < near.col_min.size(); ++t)
    d2 += qs.weights[qb + t] * std::sqrt(double{near.col_min[t]});
  return {static_cast<float>(d1), static_cast<float>(d2)};
}

namespace {

class QuadraticRwmd final : public BatchDistance {
 public:
  QuadraticRwmd(const Index& index, QueryRange q, Direction direction)
      : index_(index), q_(q), direction_(direction) {}

  void compute(float* out) override {
    const std::size_t n = index_.n_docs(), nq = q_.size();
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < nq; ++j) {
        const RwmdPair r = rwmd_pair(index_, i, q_.set, q_.begin + j);
        out[j * n + i] = direction_ == Direction::symmetric           ? std::max(r.d1, r.d2)
                         : direction_ == Direction::document_to_query ? r.d1
                                                                      : r.d2;
      }
  }

 private:
  const Index& index_;
  QueryRange q_;
  Direction direction_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_quadratic_rwmd(const Index& index, QueryRange queries,
                                                   Direction direction) {
  return std::make_unique<QuadraticRwmd>(index, queries, direction);
}

namespace {
constexpr MethodImpl kRwmdImpl{.cpu = {.make =
                                           [](const MethodContext& c) {
                                             return make_quadratic_rwmd(c.index, c.queries,
                                                                        c.options.direction);
                                           }},
                               .gpu = GpuPass::quadratic,
                               .explain = explain_rwmd};
}  // namespace

extern constinit const MethodInfo kRwmdMethod{
    .name = "rwmd",
    .summary =
        "quadratic RWMD: each pair's word costs, their row and column minima (the reference the "
        "linear-complexity methods are tested against)",
    .document_to_query = true,
    .query_to_document = true,
    .impl = &kRwmdImpl};

}  // namespace lcrwmd
