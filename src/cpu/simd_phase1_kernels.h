#pragma once
// Phase 1's kernels (simd.h) at one SIMD level: included by the per-level sources only, which
// CMake builds with LCRWMD_SIMD_LEVEL set.
#include <cstddef>
#include <cstdint>

#include "cpu/simd.h"

#ifndef LCRWMD_SIMD_LEVEL
#error "built by CMake once per level: -DLCRWMD_SIMD_LEVEL=scalar|avx2|avx512"
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1 {

void round_bf16(const float* x, std::size_t n, std::uint16_t* out);
void round_int8(const float* x, std::size_t n, float invert, std::int8_t* out);
void estimates(const float* p, float col_sq, std::size_t n, float* g);
void estimates_s32(const std::int32_t* sums, const float* row_scale, float col_scale, float col_sq,
                   std::size_t n, float* g);
void bound_sq_distances(const float* g, BoundTermArrays rows, BoundTerms col, std::size_t n,
                        float* lo, float* hi);
void bound_columns(const float* g, std::size_t g_ld, BoundTermArrays rows, std::size_t n,
                   const BoundTerms* cols, std::size_t nc, float* lo, std::size_t lo_ld);
void upper_min_into(float* limit, const float* lo, BoundTerms row, BoundTermArrays cols,
                    std::size_t n);
std::size_t select_at_most(const float* lo, const float* limit, std::size_t n, std::uint32_t* rows);
void least_three_queries(Least3 t, std::size_t ld, const float* tile, std::size_t stride,
                         std::size_t rows, const std::uint32_t* cols, const std::uint64_t* indptr,
                         std::size_t nq);
void keep_least(Least3 t, std::size_t ld, std::size_t rows, std::size_t nq,
                const std::uint64_t* first, float* z, KeptLeast* kept, std::size_t z_ld);
void columns_to_rows(const float* tile, std::size_t stride, std::size_t rows,
                     const std::uint32_t* cols, std::size_t n, float* dst, std::size_t dst_stride);

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1
