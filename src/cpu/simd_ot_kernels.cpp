// The exact WMD's dual-bound kernels (simd.h) at one SIMD level: square roots and sums of a
// pair's costs, the entropic kernel's exp, Sinkhorn's scalings and the c-transform's bound.
// Built with the other per-level sources (simd_kernels.cpp says how).
#include "cpu/simd_ot_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::ot {
namespace {

constexpr std::size_t kLanes = kSumLanes;

}  // namespace

void sqrt_to_f64(const float* sq, std::size_t n, double* out) {
  for (std::size_t e = 0; e < n; ++e) out[e] = std::sqrt(static_cast<double>(sq[e]));
}

double sum_max_f64(const double* x, std::size_t n, double* max) {
  double sum[kLanes] = {}, top[kLanes] = {};
  std::size_t e = 0;
  for (; e + kLanes <= n; e += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      sum[l] += x[e + l];
      top[l] = std::max(top[l], x[e + l]);
    }
  for (; e < n; ++e) {
    sum[0] += x[e];
    top[0] = std::max(top[0], x[e]);
  }
  double s = 0, m = 0;
  for (std::size_t l = 0; l < kLanes; ++l) {
    s += sum[l];
    m = std::max(m, top[l]);
  }
  *max = m;
  return s;
}

// exp(x) for x in [-80, 0] as plain float arithmetic the vectoriser takes (libm's exp is a
// call per element): 2^n e^f with f in [-ln 2 / 2, ln 2 / 2], Taylor to degree 7 (error
// < 2e-7; the float reduction adds ~1e-7 |x|). -80 keeps clear of denormals, whose arithmetic is
// slow (e^-80 ~ 0 beside any row's nearest entries).
void exp_neg_scaled(const double* c, std::size_t n, float scale, float* out) {
  constexpr float kRound = 0x1.8p23f;  // adding it rounds to an integer, kept in the low bits
  for (std::size_t e = 0; e < n; ++e) {
    float x = -static_cast<float>(c[e]) * scale;
    x = x < -80.0f ? -80.0f : x;
    const float shifted = x * 1.44269504f + kRound;  // log2(e) x, rounded
    const float k = shifted - kRound;
    const float f = x - k * 0.693147181f;
    float p = 1.0f / 5040;
    p = p * f + 1.0f / 720;
    p = p * f + 1.0f / 120;
    p = p * f + 1.0f / 24;
    p = p * f + 1.0f / 6;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    // 2^k from k's bits: k + 127 in the exponent field (k in [-116, 0]).
    const auto two_k = std::bit_cast<float>(static_cast<std::int32_t>(k + 127.0f) << 23);
    out[e] = p * two_k;
  }
}

void sinkhorn(const float* kernel, std::size_t na, std::size_t nb, const float* a, const float* b,
              int iterations, float* u, float* v, float* col) {
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < na; ++i) {
      const float* k = kernel + i * nb;
      float lanes[kLanes] = {};
      std::size_t j = 0;
      for (; j + kLanes <= nb; j += kLanes)
        for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += k[j + l] * v[j + l];
      float tail = 0;
      for (; j < nb; ++j) tail += k[j] * v[j];
      u[i] = a[i] / (combine_lanes(lanes) + tail);
    }
    std::fill(col, col + nb, 0.0f);
    for (std::size_t i = 0; i < na; ++i) {
      const float* k = kernel + i * nb;
      const float ui = u[i];
      for (std::size_t j = 0; j < nb; ++j) col[j] += k[j] * ui;
    }
    for (std::size_t j = 0; j < nb; ++j) v[j] = b[j] / col[j];
  }
}

double c_transformed_dual(const double* cost, std::size_t na, std::size_t nb, const double* a,
                          const double* b, const double* f, double* g) {
  std::fill(g, g + nb, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < na; ++i) {
    const double* c = cost + i * nb;
    for (std::size_t j = 0; j < nb; ++j) g[j] = std::min(g[j], c[j] - f[i]);
  }
  double bound = 0;
  for (std::size_t i = 0; i < na; ++i) {
    const double* c = cost + i * nb;
    // A minimum, in lanes: the same in any order.
    double lanes[4];
    std::fill(lanes, lanes + 4, std::numeric_limits<double>::infinity());
    std::size_t j = 0;
    for (; j + 4 <= nb; j += 4)
      for (std::size_t l = 0; l < 4; ++l) lanes[l] = std::min(lanes[l], c[j + l] - g[j + l]);
    for (; j < nb; ++j) lanes[0] = std::min(lanes[0], c[j] - g[j]);
    bound += a[i] * std::min(std::min(lanes[0], lanes[1]), std::min(lanes[2], lanes[3]));
  }
  for (std::size_t j = 0; j < nb; ++j) bound += b[j] * g[j];
  return bound;
}

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::ot
