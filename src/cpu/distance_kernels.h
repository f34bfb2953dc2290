#pragma once
// Small dense kernels shared by every method, so that the same arithmetic gives the same
// float everywhere (a document at distance exactly 0 from itself depends on it). The distances
// are simd.h's, at the level chosen for this CPU.
#include <cstddef>
#include <cstdint>

#include "cpu/simd.h"

namespace lcrwmd::cpu {

inline float sq_norm(const float* a, std::size_t m) { return kernels().sq_norm(a, m); }

inline float sq_dist(const float* a, const float* b, std::size_t m) {
  return kernels().sq_dist(a, b, m);
}

inline double sq_dist_f64(const float* a, const float* b, std::size_t m) {
  return kernels().sq_dist_f64(a, b, m);
}

// out[0..m) = sum_p weights[p] * vector_of(words[p]), accumulated in double.
template <typename VectorOf>
void weighted_centroid(const std::uint32_t* words, const float* weights, std::size_t h,
                       VectorOf&& vector_of, std::size_t m, double* acc, float* out) {
  for (std::size_t d = 0; d < m; ++d) acc[d] = 0;
  for (std::size_t p = 0; p < h; ++p) {
    const float* v = vector_of(words[p]);
    const double w = weights[p];
    for (std::size_t d = 0; d < m; ++d) acc[d] += w * v[d];
  }
  for (std::size_t d = 0; d < m; ++d) out[d] = static_cast<float>(acc[d]);
}

}  // namespace lcrwmd::cpu
