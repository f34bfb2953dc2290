// The exact WMD's dual-bound kernels: every SIMD level this machine runs gives the scalar
// level's bits, and the scalar level agrees with direct loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu/kernel_levels.h"
#include "cpu/simd.h"

namespace lcrwmd {
namespace {

using namespace test;

TEST(SimdKernels, DualBoundKernelsMatchDirectLoops) {
  std::mt19937 rng(11);
  for (std::size_t na : {1u, 7u, 19u})
    for (std::size_t nb : {1u, 8u, 23u}) {
      SCOPED_TRACE(std::to_string(na) + " x " + std::to_string(nb));
      const std::size_t n = na * nb;
      std::vector<double> cost(n);
      for (double& c : cost) c = 3.0 * std::uniform_real_distribution<double>(0, 1)(rng);
      const float scale = 20.0f;  // arguments down to -60
      std::vector<float> kern(n), sq(n);
      scalar().exp_neg_scaled(cost.data(), n, scale, kern.data());
      for (std::size_t e = 0; e < n; ++e) {
        const double x = -static_cast<float>(cost[e]) * scale;
        const double want = std::exp(x);
        EXPECT_NEAR(kern[e], want, 1e-7 * (2 - x) * want);  // float range reduction: ~|x| ulps
        sq[e] = static_cast<float>(cost[e] * cost[e]);
      }
      std::vector<double> roots(n);
      scalar().sqrt_to_f64(sq.data(), n, roots.data());
      for (std::size_t e = 0; e < n; ++e) EXPECT_EQ(roots[e], std::sqrt(double{sq[e]}));
      double top = -1;
      const double sum = scalar().sum_max_f64(cost.data(), n, &top);
      EXPECT_EQ(top, *std::max_element(cost.begin(), cost.end()));
      EXPECT_NEAR(sum, std::accumulate(cost.begin(), cost.end(), 0.0), 1e-12 * (1 + sum));
      const std::vector<float> a(na, 1.0f / static_cast<float>(na)),
          b(nb, 1.0f / static_cast<float>(nb));
      scalar().exp_neg_scaled(cost.data(), n, 1.0f, kern.data());  // well-conditioned kernel
      std::vector<float> u(na, 1.0f), v(nb, 1.0f), col(nb);
      scalar().sinkhorn(kern.data(), na, nb, a.data(), b.data(), 3, u.data(), v.data(), col.data());
      std::vector<double> ud(na, 1.0), vd(nb, 1.0);
      for (int it = 0; it < 3; ++it) {
        for (std::size_t i = 0; i < na; ++i) {
          double s = 0;
          for (std::size_t j = 0; j < nb; ++j) s += double{kern[i * nb + j]} * vd[j];
          ud[i] = a[i] / s;
        }
        for (std::size_t j = 0; j < nb; ++j) {
          double s = 0;
          for (std::size_t i = 0; i < na; ++i) s += double{kern[i * nb + j]} * ud[i];
          vd[j] = b[j] / s;
        }
      }
      for (std::size_t i = 0; i < na; ++i) EXPECT_NEAR(u[i], ud[i], 1e-4 * ud[i]);
      for (std::size_t j = 0; j < nb; ++j) EXPECT_NEAR(v[j], vd[j], 1e-4 * vd[j]);
      std::vector<double> f(na), g(nb), ad(a.begin(), a.end()), bd(b.begin(), b.end());
      for (double& x : f) x = std::uniform_real_distribution<double>(-1, 1)(rng);
      const double dual = scalar().c_transformed_dual(cost.data(), na, nb, ad.data(), bd.data(),
                                                      f.data(), g.data());
      std::vector<double> gd(nb, std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j) gd[j] = std::min(gd[j], cost[i * nb + j] - f[i]);
      double want = 0;
      for (std::size_t i = 0; i < na; ++i) {
        double fi = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < nb; ++j) fi = std::min(fi, cost[i * nb + j] - gd[j]);
        want += ad[i] * fi;
      }
      for (std::size_t j = 0; j < nb; ++j) want += bd[j] * gd[j];
      EXPECT_NEAR(dual, want, 1e-12);
      for (const Kernels* k : wider_levels()) {
        SCOPED_TRACE(cpu::simd_name(k->level));
        std::vector<float> kw(n), uw(na, 1.0f), vw(nb, 1.0f), cw(nb);
        std::vector<double> rw(n), gw(nb);
        k->exp_neg_scaled(cost.data(), n, 1.0f, kw.data());
        EXPECT_EQ(kw, kern);
        k->sqrt_to_f64(sq.data(), n, rw.data());
        EXPECT_EQ(rw, roots);
        double top_w = -1;
        EXPECT_EQ(k->sum_max_f64(cost.data(), n, &top_w), sum);
        EXPECT_EQ(top_w, top);
        k->sinkhorn(kw.data(), na, nb, a.data(), b.data(), 3, uw.data(), vw.data(), cw.data());
        EXPECT_EQ(uw, u);
        EXPECT_EQ(vw, v);
        EXPECT_EQ(
            k->c_transformed_dual(cost.data(), na, nb, ad.data(), bd.data(), f.data(), gw.data()),
            dual);
      }
    }
}

}  // namespace
}  // namespace lcrwmd
