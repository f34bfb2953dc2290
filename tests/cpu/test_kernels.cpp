// The vectorised kernels against their scalar forms.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu/sparse_dot.h"

namespace lcrwmd {
namespace {

TEST(SparseDot, MatchesScalarForEveryLength) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 2.0f);
  std::vector<float> z(1000);
  for (float& x : z) x = u(rng);
  for (std::size_t h : {0u, 1u, 7u, 8u, 9u, 16u, 31u, 107u, 300u}) {
    const float tol = 1e-5f * static_cast<float>(1 + h);
    std::vector<std::uint32_t> idx(h);
    std::vector<float> val(h);
    for (std::size_t p = 0; p < h; ++p) {
      idx[p] = static_cast<std::uint32_t>(rng() % z.size());
      val[p] = u(rng);
    }
    const float want = cpu::sparse_dot_scalar(idx.data(), val.data(), h, z.data());
    EXPECT_NEAR(cpu::sparse_dot(idx.data(), val.data(), h, z.data()), want, tol);
    const cpu::SplitDot a = cpu::sparse_dot_split(idx.data(), val.data(), h, z.data());
    const cpu::SplitDot b = cpu::sparse_dot_split_scalar(idx.data(), val.data(), h, z.data());
    EXPECT_NEAR(a.dot, b.dot, tol) << h;
    EXPECT_NEAR(a.negative, b.negative, tol) << h;
    if (h > 0) {
      EXPECT_GT(b.negative, 0.0f);  // z has negative entries to split off
    }
  }
}

}  // namespace
}  // namespace lcrwmd
