#include "ot/dual_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace lcrwmd::ot {
namespace {

// Measured on bbcsport and 20news pairs: at 3% of the mean cost, 12 iterations bring the
// bound to ~98% of the EMD; more iterations or a lower temperature gain little per cost.
constexpr double kTemperature = 0.03;
constexpr int kIterations = 12;

}  // namespace

double emd_dual_bound(std::span<const double> a_in, std::span<const double> b_in,
                      std::span<const double> cost) {
  const std::size_t na = a_in.size(), nb = b_in.size();
  thread_local std::vector<double> a, b, kernel, u, v, f, g;
  a.assign(a_in.begin(), a_in.end());
  b.assign(b_in.begin(), b_in.end());
  double sa = 0, sb = 0, mean = 0;
  for (double x : a) sa += x;
  for (double x : b) sb += x;
  for (double& x : a) x /= sa;
  for (double& x : b) x /= sb;
  double max_cost = 0;
  for (double c : cost) {
    mean += c;
    max_cost = std::max(max_cost, c);
  }
  mean /= static_cast<double>(cost.size());
  if (!(mean > 0)) return 0;
  const double eps = kTemperature * mean;
  kernel.resize(na * nb);
  const double inv_eps = 1.0 / eps;
  const double* c = cost.data();
  double* kern = kernel.data();
#pragma omp simd
  for (std::size_t e = 0; e < na * nb; ++e) kern[e] = std::exp(-c[e] * inv_eps);
  u.assign(na, 1.0);
  v.assign(nb, 1.0);
  std::vector<double>& kt_u = g;  // scratch for K^T u
  for (int it = 0; it < kIterations; ++it) {
    for (std::size_t i = 0; i < na; ++i) {
      const double* k = &kernel[i * nb];
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (std::size_t j = 0; j < nb; ++j) s += k[j] * v[j];
      u[i] = a[i] / s;
    }
    kt_u.assign(nb, 0.0);
    for (std::size_t i = 0; i < na; ++i) {
      const double* k = &kernel[i * nb];
      for (std::size_t j = 0; j < nb; ++j) kt_u[j] += k[j] * u[i];
    }
    for (std::size_t j = 0; j < nb; ++j) v[j] = b[j] / kt_u[j];
  }
  // Potentials f = eps log u (a non-finite one, from underflow, restarts at 0), then the two
  // c-transforms that make (f, g) feasible.
  f.resize(na);
  for (std::size_t i = 0; i < na; ++i) {
    const double x = eps * std::log(u[i]);
    f[i] = std::isfinite(x) ? x : 0.0;
  }
  g.assign(nb, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < na; ++i)
    for (std::size_t j = 0; j < nb; ++j) g[j] = std::min(g[j], cost[i * nb + j] - f[i]);
  double bound = 0;
  for (std::size_t i = 0; i < na; ++i) {
    double fi = std::numeric_limits<double>::infinity();
#pragma omp simd reduction(min : fi)
    for (std::size_t j = 0; j < nb; ++j) fi = std::min(fi, cost[i * nb + j] - g[j]);
    bound += a[i] * fi;
  }
  for (std::size_t j = 0; j < nb; ++j) bound += b[j] * g[j];
  // emd() quantises weights to 2^-52 and costs to 2^-40 of the largest: its answer may lie
  // below this bound by that much, and the bound must stay below it.
  return bound - 1e-11 * max_cost;
}

}  // namespace lcrwmd::ot
