#pragma once
// Small dense kernels shared by every method, so that the same arithmetic gives the same
// float everywhere (a document at distance exactly 0 from itself depends on it).
#include <cstddef>
#include <cstdint>

namespace lcrwmd::cpu {

// Sum of squares, eight lanes so the compiler vectorises without reassociation flags.
inline float sq_norm(const float* a, std::size_t m) {
  float acc[8] = {};
  std::size_t d = 0;
  for (; d + 8 <= m; d += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[d + l] * a[d + l];
  float s = 0;
  for (; d < m; ++d) s += a[d] * a[d];
  for (int l = 0; l < 8; ++l) s += acc[l];
  return s;
}

// ||a - b||^2 computed directly: exact 0 for identical vectors, accurate when small.
inline float sq_dist(const float* a, const float* b, std::size_t m) {
  float acc[8] = {};
  std::size_t d = 0;
  for (; d + 8 <= m; d += 8)
    for (int l = 0; l < 8; ++l) {
      const float t = a[d + l] - b[d + l];
      acc[l] += t * t;
    }
  float s = 0;
  for (; d < m; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  for (int l = 0; l < 8; ++l) s += acc[l];
  return s;
}

// ||a - b||^2 with the differences and the sum in double: the ground costs of exact WMD.
inline double sq_dist_f64(const float* a, const float* b, std::size_t m) {
  double acc[4] = {};
  std::size_t d = 0;
  for (; d + 4 <= m; d += 4)
    for (int l = 0; l < 4; ++l) {
      const double t = static_cast<double>(a[d + l]) - static_cast<double>(b[d + l]);
      acc[l] += t * t;
    }
  double s = 0;
  for (; d < m; ++d) {
    const double t = static_cast<double>(a[d]) - static_cast<double>(b[d]);
    s += t * t;
  }
  return s + (acc[0] + acc[1]) + (acc[2] + acc[3]);
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
