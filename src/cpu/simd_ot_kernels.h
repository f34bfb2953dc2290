#pragma once
// The exact WMD's dual-bound kernels (simd.h) at one SIMD level: included by the per-level
// sources only, which CMake builds with LCRWMD_SIMD_LEVEL set.
#include <cstddef>

#include "cpu/simd.h"

#ifndef LCRWMD_SIMD_LEVEL
#error "built by CMake once per level: -DLCRWMD_SIMD_LEVEL=scalar|avx2|avx512"
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::ot {

void sqrt_to_f64(const float* sq, std::size_t n, double* out);
double sum_max_f64(const double* x, std::size_t n, double* max);
void exp_neg_scaled(const double* c, std::size_t n, float scale, float* out);
void sinkhorn(const float* kernel, std::size_t na, std::size_t nb, const float* a, const float* b,
              int iterations, float* u, float* v, float* col);
double c_transformed_dual(const double* cost, std::size_t na, std::size_t nb, const double* a,
                          const double* b, const double* f, double* g);

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::ot
