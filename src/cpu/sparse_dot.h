#pragma once
// The phase-2 inner loop of LC-RWMD, once per nonzero of the index: sum_p val[p] * z[idx[p]].
// A scalar loop waits on each addition and on each load of z in turn; with AVX2 eight lanes
// gather and accumulate independently (about 30% faster per nonzero on this project's
// machines). `split` variants also return sum_p -min(z[idx[p]], 0) and use max(z, 0) in the
// dot product: LC-RWMD stores its B2 terms as negative entries of z.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lcrwmd::cpu {

struct SplitDot {
  float dot;       // sum val * max(z, 0)
  float negative;  // sum -min(z, 0)
};

inline float sparse_dot_scalar(const std::uint32_t* idx, const float* val, std::size_t h,
                               const float* z) {
  float s = 0;
  for (std::size_t p = 0; p < h; ++p) s += val[p] * z[idx[p]];
  return s;
}

inline SplitDot sparse_dot_split_scalar(const std::uint32_t* idx, const float* val, std::size_t h,
                                        const float* z) {
  SplitDot r{0, 0};
  for (std::size_t p = 0; p < h; ++p) {
    const float x = z[idx[p]];
    r.dot += val[p] * std::max(x, 0.0f);
    r.negative -= std::min(x, 0.0f);
  }
  return r;
}

#if defined(__AVX2__) && defined(__FMA__)
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

inline float sparse_dot(const std::uint32_t* idx, const float* val, std::size_t h, const float* z) {
  __m256 acc = _mm256_setzero_ps();
  std::size_t p = 0;
  for (; p + 8 <= h; p += 8) {
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + p));
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(val + p), _mm256_i32gather_ps(z, i, 4), acc);
  }
  return hsum(acc) + sparse_dot_scalar(idx + p, val + p, h - p, z);
}

inline SplitDot sparse_dot_split(const std::uint32_t* idx, const float* val, std::size_t h,
                                 const float* z) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 dot = zero, neg = zero;
  std::size_t p = 0;
  for (; p + 8 <= h; p += 8) {
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + p));
    const __m256 x = _mm256_i32gather_ps(z, i, 4);
    dot = _mm256_fmadd_ps(_mm256_loadu_ps(val + p), _mm256_max_ps(x, zero), dot);
    neg = _mm256_sub_ps(neg, _mm256_min_ps(x, zero));
  }
  const SplitDot tail = sparse_dot_split_scalar(idx + p, val + p, h - p, z);
  return {hsum(dot) + tail.dot, hsum(neg) + tail.negative};
}
#else
inline float sparse_dot(const std::uint32_t* idx, const float* val, std::size_t h, const float* z) {
  return sparse_dot_scalar(idx, val, h, z);
}
inline SplitDot sparse_dot_split(const std::uint32_t* idx, const float* val, std::size_t h,
                                 const float* z) {
  return sparse_dot_split_scalar(idx, val, h, z);
}
#endif

}  // namespace lcrwmd::cpu
