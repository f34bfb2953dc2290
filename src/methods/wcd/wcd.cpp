// Word Centroid Distance: ||centroid(doc) - centroid(query)||, computed directly so a
// document is at exactly 0 from itself.
#include <cmath>
#include <vector>

#include "cpu/distance_kernels.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"

namespace lcrwmd {
namespace {

class Wcd final : public BatchDistance {
 public:
  Wcd(const Index& index, QueryRange q) : index_(index), q_(q) {}

  void compute(float* out) override {
    const std::size_t m = index_.dim(), n = index_.n_docs(), nq = q_.size();
    std::vector<float> qc(nq * m);
    std::vector<double> acc(m);
    for (std::size_t j = 0; j < nq; ++j) {
      const std::size_t q = q_.begin + j, b = q_.set.indptr[q];
      cpu::weighted_centroid(
          q_.set.words.data() + b, q_.set.weights.data() + b, q_.set.length(q),
          [&](std::uint32_t u) { return query_word_vector(index_, q_.set, u); }, m, acc.data(),
          qc.data() + j * m);
    }
    const float* dc = index_.centroids();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < nq; ++j)
        out[j * n + i] = std::sqrt(cpu::sq_dist(dc + i * m, qc.data() + j * m, m));
  }

 private:
  const Index& index_;
  QueryRange q_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_wcd(const Index& index, QueryRange queries) {
  return std::make_unique<Wcd>(index, queries);
}

namespace {
constexpr MethodImpl kWcdImpl{
    .cpu = {.make = [](const MethodContext& c) { return make_wcd(c.index, c.queries); }},
    .gpu = GpuPass::centroids};
}  // namespace

extern constinit const MethodInfo kWcdMethod{
    .name = "wcd",
    .summary =
        "Word Centroid Distance: between the documents' weighted mean vectors; below RWMD, the "
        "cheapest",
    .impl = &kWcdImpl};

}  // namespace lcrwmd
