#pragma once
// Phase 1's kernels (simd.h) at one SIMD level (simd_phase1_kernels.cpp: rounding, estimates
// and their intervals; simd_least_kernels.cpp: the least lower bounds and the cache's
// transpose): included by the per-level sources only, which CMake builds with
// LCRWMD_SIMD_LEVEL set.
#include <cstddef>
#include <cstdint>

#include "cpu/simd.h"

#ifndef LCRWMD_SIMD_LEVEL
#error "built by CMake once per level: -DLCRWMD_SIMD_LEVEL=scalar|avx2|avx512"
#endif

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1 {

#if defined(__AVX512F__)
// The mask of a register's first n lanes (all sixteen from n = 16 on).
inline __mmask16 lanes_below(std::size_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
}
// x[r][i] becomes x[i][r]: 32-bit, then 64-bit interleaves, then two rounds of 128-bit lanes.
inline void transpose16(__m512 x[16]) {
  // The masked forms, all lanes on: GCC 12 warns of the plain ones' undefined pass-through.
  constexpr __mmask16 all = 0xFFFF;
  constexpr __mmask8 all8 = 0xFF;
  __m512 t[16];
  for (std::size_t i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(all, x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(all, x[2 * i], x[2 * i + 1]);
  }
  const auto pd = [](__m512 v) { return _mm512_castps_pd(v); };
  for (std::size_t i = 0; i < 4; ++i) {
    x[4 * i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all8, pd(t[4 * i]), pd(t[4 * i + 2])));
    x[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all8, pd(t[4 * i]), pd(t[4 * i + 2])));
    x[4 * i + 2] =
        _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all8, pd(t[4 * i + 1]), pd(t[4 * i + 3])));
    x[4 * i + 3] =
        _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all8, pd(t[4 * i + 1]), pd(t[4 * i + 3])));
  }
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      t[8 * i + j] = _mm512_maskz_shuffle_f32x4(all, x[8 * i + j], x[8 * i + j + 4], 0x88);
      t[8 * i + j + 4] = _mm512_maskz_shuffle_f32x4(all, x[8 * i + j], x[8 * i + j + 4], 0xdd);
    }
  for (std::size_t j = 0; j < 8; ++j) {
    x[j] = _mm512_maskz_shuffle_f32x4(all, t[j], t[j + 8], 0x88);
    x[j + 8] = _mm512_maskz_shuffle_f32x4(all, t[j], t[j + 8], 0xdd);
  }
}
#endif

void round_bf16(const float* x, std::size_t n, std::uint16_t* out);
void round_int8(const float* x, std::size_t n, float invert, std::int8_t* out);
void estimates(const float* p, float col_sq, std::size_t n, float* g);
void estimates_s32(const std::int32_t* sums, const float* row_scale, float col_scale, float col_sq,
                   std::size_t n, float* g);
void bound_sq_distances(const float* g, BoundTermArrays rows, BoundTerms col, std::size_t n,
                        float* lo, float* hi);
void bound_columns(const float* g, std::size_t g_ld, BoundTermArrays rows, std::size_t n,
                   const BoundTerms* cols, std::size_t nc, float* lo, std::size_t lo_ld);
// Kernels::int8_bound_strip at this level on this CPU, or nullptr, and what it runs.
struct Int8StripKernel {
  decltype(Kernels::int8_bound_strip) run;
  const char* isa;
};
Int8StripKernel int8_bound_strip_kernel();
void upper_min_into(float* limit, const float* lo, BoundTerms row, BoundTermArrays cols,
                    std::size_t n);
std::size_t select_at_most(const float* lo, const float* limit, std::size_t n, std::uint32_t* rows);
std::size_t columns_below(const float* tile, std::size_t stride, std::size_t rows,
                          const float* limit, std::size_t n, std::uint32_t* cols);
void least_three_queries(Least3 t, std::size_t ld, const float* tile, std::size_t stride,
                         std::size_t rows, const std::uint32_t* cols, const std::uint64_t* indptr,
                         std::size_t nq);
void keep_least(Least3 t, std::size_t ld, std::size_t rows, std::size_t nq,
                const std::uint64_t* first, float* z, KeptLeast* kept, std::size_t z_ld);
void columns_to_rows(const float* tile, std::size_t stride, std::size_t rows,
                     const std::uint32_t* cols, std::size_t n, float* dst, std::size_t dst_stride);

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL {

// LC-RWMD's D2 from the word-distance cache (simd.h: gather_min), beside phase 1's minima.
void gather_min(const float* rows, std::size_t stride, const std::uint64_t* indptr,
                const std::uint32_t* idx, std::size_t n_docs, std::size_t h, float* out);

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL
