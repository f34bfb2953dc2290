#pragma once
// The error bound that certifies phase 1's low-precision word distances (cpu/word_gemm.h).
//
// Phase 1 estimates d(e, t) = ||e - t||^2 for a vocabulary vector e and a query-word vector t
// as |e|^2 + |t|^2 - 2 p, with p the GEMM's product of their rounded copies e', t'. What is
// reported is not the estimate but sq_dist(e, t), the squared distance recomputed from the
// vectors in float in a fixed order (simd.h); the estimate only has to say which entries can
// matter. So its interval must hold that float, and it does with
//
//   |estimate - sq_dist(e, t)| <= beta = 2 r_e (n_t + r_t) + 2 n_e r_t + kappa (s_e + s_t) + tiny
//
// where r_x = ||x - x'|| (what rounding took; 0 in f32), n_x = ||x||, s_x the float squared
// norm the estimate adds, and
//   * e.t - e'.t' = (e - e').t + e'.(t - t'), |.| <= r_e n_t + (n_e + r_e) r_t (Cauchy-Schwarz);
//   * kappa (s_e + s_t) takes every float rounding, with u = 2^-24 and K = dim: the GEMM's sums
//     (gamma_K |e'| |t'| <= gamma_K (1 + 0.07)^2 (s_e + s_t) / 2, times 2; bf16 products are
//     exact in float, int8 sums exact in int32), the squared norms (gamma_K each), the
//     estimate's own two operations and its interval's (~3u |.|), and sq_dist's rounding
//     (gamma_{K+2} d with d <= 2 (|e|^2 + |t|^2)): ~(4.2 K + 12) u in all, taken as (6 K + 64) u;
//   * tiny: AMX flushes denormal partial sums to zero (< 2^-126 each).
// int8's scale per vector keeps r_x <= sqrt(K) max|x_i| / 254, so |x'| <= 1.07 |x| for K <= 300
// (the 0.07 above; larger K only widens the interval it is part of, kappa's share is small).
//
// beta is evaluated in float as ra * ca + rb * cb + rc + cc from a row's terms (vocabulary word)
// and a column's (query word), each coefficient rounded up by 2^-20 relative, which outweighs
// the evaluation's own three roundings (3u).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

// beta is evaluated on the GPU too (cuda/phase1_kernels.cu), from the same terms.
#ifdef __CUDACC__
#define LCRWMD_HOST_DEVICE __host__ __device__
#else
#define LCRWMD_HOST_DEVICE
#endif

namespace lcrwmd::cpu::bounds {

inline double kappa(std::size_t dim) { return (6.0 * static_cast<double>(dim) + 64.0) * 0x1p-24; }

// The GPU's GEMMs (cuBLAS: SGEMM, and BF16 on tensor cores) sum in an order cuBLAS picks, and
// tensor cores truncate their sums rather than round them, each addition then erring by up to
// 2u, not u (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores",
// 2021). Their terms are made for twice the dimension: kappa's share for the GEMM's sums, and
// the rest of it, at least doubled.
inline std::size_t gpu_bound_dim(std::size_t dim) { return 2 * dim; }
inline constexpr double kTiny = 0x1p-100;

// A float >= x (x >= 0): rounded to float, then raised by 2^-20 of itself; +inf stays, 0 stays
// 0, and anything else is at least 2^-60, so that no product of two terms is denormal (the
// CPU's arithmetic on denormals is ~100x slower).
inline float up(double x) {
  if (x == 0) return 0.0f;
  const double raised = std::max(x * (1.0 + 0x1p-20), 0x1p-60);
  return raised >= static_cast<double>(std::numeric_limits<float>::max())
             ? std::numeric_limits<float>::infinity()
             : std::nextafter(static_cast<float>(raised), std::numeric_limits<float>::infinity());
}

// One side's share of beta.
struct Terms {
  float a, b, c;
};

// A vocabulary word's: ra = 2 r_e, rb = 2 n_e, rc = kappa s_e.
inline Terms row_terms(double residual, double norm, float sq_norm, std::size_t dim) {
  return {up(2 * residual), up(2 * norm), up(kappa(dim) * sq_norm)};
}

// A query word's: ca = n_t + r_t, cb = r_t, cc = kappa s_t + tiny.
inline Terms column_terms(double residual, double norm, float sq_norm, std::size_t dim) {
  return {up(norm + residual), up(residual), up(kappa(dim) * sq_norm + kTiny)};
}

LCRWMD_HOST_DEVICE inline float beta(const Terms& row, const Terms& col) {
  return row.a * col.a + row.b * col.b + row.c + col.c;
}

}  // namespace lcrwmd::cpu::bounds
