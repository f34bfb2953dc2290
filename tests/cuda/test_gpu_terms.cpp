// The GPU's certified phase 1, its host side (cuda/word_terms.h): which precision a device
// runs, the bf16 copies it reads, and whether the interval estimate +- beta holds the squared
// distance as the kernels recompute it (device::exact_sq_dist) for GEMMs that sum in any
// order, rounding or truncating. Plain C++: tested everywhere, with or without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "cpu/word_gemm.h"
#include "cuda/word_terms.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd {
namespace {

using cuda::RoundedWords;
using cuda::Side;

GpuDevice of_compute(int major) {
  GpuDevice d;
  d.compute_major = major;
  return d;
}

TEST(GpuPrecision, ResolvedByTheDevice) {
  EXPECT_EQ(gpu_precision(of_compute(9)), Precision::bf16);
  EXPECT_EQ(gpu_precision(of_compute(8)), Precision::bf16);
  EXPECT_EQ(gpu_precision(of_compute(7)), Precision::f32);
  EXPECT_EQ(gpu_precision(of_compute(7), Precision::f32), Precision::f32);
  EXPECT_EQ(gpu_precision(of_compute(8), Precision::f32), Precision::f32);
  EXPECT_EQ(gpu_precision(of_compute(9), Precision::bf16), Precision::bf16);
  EXPECT_THROW(gpu_precision(of_compute(7), Precision::bf16), Error);
  EXPECT_THROW(gpu_precision(of_compute(9), Precision::int8), Error);
  const std::vector<float> x(4, 1.0f), n(1, 4.0f);
  EXPECT_THROW(cuda::round_words(Precision::int8, Side::rows, x.data(), n.data(), 1, 4), Error);
}

TEST(GpuPrecision, Bf16CopiesAreTheCpusPaddedWithZeros) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g;
  const std::size_t dim = 13, n = 5, ld = cuda::bf16_stride(dim);
  ASSERT_EQ(ld, 16u);
  std::vector<float> x(n * dim), sq(n);
  for (float& v : x) v = g(rng);
  const RoundedWords r =
      cuda::round_words(Precision::bf16, Side::rows, x.data(), sq.data(), n, dim);
  ASSERT_EQ(r.bf16.size(), n * ld);
  std::vector<std::uint16_t> want(ld);
  for (std::size_t i = 0; i < n; ++i) {
    cpu::round_to_bf16(x.data() + i * dim, dim, ld, want.data());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), r.bf16.begin() + i * ld)) << i;
    for (std::size_t d = dim; d < ld; ++d) EXPECT_EQ(r.bf16[i * ld + d], 0) << i;
  }
  EXPECT_TRUE(
      cuda::round_words(Precision::f32, Side::rows, x.data(), sq.data(), n, dim).bf16.empty());
}

float from_bf16(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// device::exact_sq_dist in the same order: lane l sums dimensions l, l + 32, ... with fused
// multiply-adds, then the lanes are added in a tree (16, 8, 4, 2, 1) into lane 0.
float device_sq_dist(const float* a, const float* b, std::size_t dim) {
  float lanes[32] = {};
  for (std::size_t d = 0; d < dim; ++d) {
    const float t = a[d] - b[d];
    lanes[d % 32] = std::fma(t, t, lanes[d % 32]);
  }
  for (int o = 16; o > 0; o /= 2)
    for (int l = 0; l < o; ++l) lanes[l] += lanes[l + o];
  return lanes[0];
}

// A float toward zero from a double.
float truncated(double x) {
  float f = static_cast<float>(x);
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return f;
}

// The GEMM's product of the copies it reads, summed as a GPU might: in order rounding to
// nearest, in order truncating each sum (tensor cores), or in reverse.
enum class Sum { nearest, truncating, reversed };
float gemm_dot(const float* a, const float* b, std::size_t dim, Sum how) {
  float s = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    const std::size_t d = how == Sum::reversed ? dim - 1 - i : i;
    const double p = static_cast<double>(a[d]) * b[d];  // exact for bf16, rounded below for f32
    if (how == Sum::truncating)
      s = truncated(static_cast<double>(s) + static_cast<double>(truncated(p)));
    else
      s = std::fma(a[d], b[d], s);
  }
  return s;
}

float float_sq_norm(const float* x, std::size_t dim) {
  float s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += x[d] * x[d];
  return s;
}

// Pairs a GEMM finds hard: random, near duplicates (the expansion cancels), the same vector,
// very different norms, tiny and large scales.
std::vector<float> hard_vectors(std::size_t dim, std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> g;
  std::vector<float> x(n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    const float scale = std::pow(10.0f, static_cast<float>(static_cast<int>(i % 7) - 3));
    for (std::size_t d = 0; d < dim; ++d) x[i * dim + d] = scale * g(rng);
    if (i % 5 == 1)  // a near copy of the one before
      for (std::size_t d = 0; d < dim; ++d)
        x[i * dim + d] = x[(i - 1) * dim + d] * (1.0f + 1e-6f * g(rng));
    if (i % 5 == 2)  // an exact copy
      std::copy_n(x.begin() + (i - 2) * dim, dim, x.begin() + i * dim);
  }
  return x;
}

TEST(GpuPrecision, IntervalsHoldTheRecomputedDistance) {
  std::mt19937 rng(11);
  for (const Precision p : {Precision::f32, Precision::bf16})
    for (const std::size_t dim :
         {std::size_t{1}, std::size_t{7}, std::size_t{33}, std::size_t{300}}) {
      const std::size_t n = 40;
      const std::vector<float> x = hard_vectors(dim, n, rng);
      std::vector<float> sq(n);
      for (std::size_t i = 0; i < n; ++i) sq[i] = float_sq_norm(x.data() + i * dim, dim);
      const RoundedWords rows = cuda::round_words(p, Side::rows, x.data(), sq.data(), n, dim);
      const RoundedWords cols = cuda::round_words(p, Side::columns, x.data(), sq.data(), n, dim);
      const std::size_t ld = cuda::bf16_stride(dim);
      // What the GEMM reads of each vector.
      std::vector<float> read(n * dim);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t d = 0; d < dim; ++d)
          read[i * dim + d] =
              p == Precision::bf16 ? from_bf16(rows.bf16[i * ld + d]) : x[i * dim + d];
      std::size_t checked = 0;
      for (std::size_t u = 0; u < n; ++u)
        for (std::size_t t = 0; t < n; ++t) {
          const float exact = device_sq_dist(x.data() + u * dim, x.data() + t * dim, dim);
          const float b = cpu::bounds::beta(rows.terms[u], cols.terms[t]);
          for (const Sum how : {Sum::nearest, Sum::truncating, Sum::reversed}) {
            // The epilogue's operations in its order: (-2 dot + |e|^2) + |t|^2.
            const float xs =
                -2.0f * gemm_dot(read.data() + u * dim, read.data() + t * dim, dim, how);
            const float est = xs + sq[u] + sq[t];
            const float lo = std::max(0.0f, est - b), hi = est + b;
            ASSERT_LE(lo, exact) << to_string(p) << " dim " << dim << " " << u << "," << t;
            ASSERT_GE(hi, exact) << to_string(p) << " dim " << dim << " " << u << "," << t;
            // The cache keeps lo alone; D2 bounds from above with lo + 2 beta.
            ASSERT_GE(lo + 2.0f * b, exact);
            ++checked;
          }
        }
      EXPECT_EQ(checked, 3 * n * n);
    }
}

TEST(GpuPrecision, TheGpusBoundIsWiderThanTheCpus) {
  std::mt19937 rng(3);
  const std::size_t dim = 300, n = 8;
  const std::vector<float> x = hard_vectors(dim, n, rng);
  std::vector<float> sq(n);
  for (std::size_t i = 0; i < n; ++i) sq[i] = float_sq_norm(x.data() + i * dim, dim);
  for (const Precision p : {Precision::f32, Precision::bf16}) {
    const RoundedWords r = cuda::round_words(p, Side::rows, x.data(), sq.data(), n, dim);
    for (std::size_t i = 0; i < n; ++i) {
      const double norm = cpu::norm_of(x.data() + i * dim, dim);
      const cpu::bounds::Terms cpu_terms = cpu::bounds::row_terms(0.0, norm, sq[i], dim);
      EXPECT_GT(r.terms[i].c, cpu_terms.c);  // kappa for the GPU's sums
      EXPECT_GE(r.terms[i].b, cpu_terms.b);
      if (p == Precision::bf16 && sq[i] > 0) {
        EXPECT_GT(r.terms[i].a, 0.0f);  // what rounding took
      }
    }
  }
}

}  // namespace
}  // namespace lcrwmd
