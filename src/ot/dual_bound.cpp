#include "ot/dual_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/simd.h"

namespace lcrwmd::ot {

double emd_dual_bound(std::span<const double> a_in, std::span<const double> b_in,
                      std::span<const double> cost, DualEffort effort, Potentials* potentials) {
  const std::size_t na = a_in.size(), nb = b_in.size();
  thread_local std::vector<double> a, b, f, g;
  thread_local std::vector<float> kernel, af, bf, u, v, col;
  a.assign(a_in.begin(), a_in.end());
  b.assign(b_in.begin(), b_in.end());
  double sa = 0, sb = 0;
  for (double x : a) sa += x;
  for (double x : b) sb += x;
  for (double& x : a) x /= sa;
  for (double& x : b) x /= sb;
  const cpu::Kernels& k = cpu::kernels();
  double max_cost = 0;
  const double mean =
      k.sum_max_f64(cost.data(), cost.size(), &max_cost) / static_cast<double>(cost.size());
  if (!(mean > 0)) {
    if (potentials) {
      potentials->f.assign(na, 0.0);
      potentials->g.assign(nb, 0.0);
    }
    return 0;
  }
  // Sinkhorn in float: twice the vector width, and its potentials need not be exact.
  const double eps = effort.temperature * mean;
  kernel.resize(na * nb);
  k.exp_neg_scaled(cost.data(), na * nb, static_cast<float>(1.0 / eps), kernel.data());
  af.assign(a.begin(), a.end());
  bf.assign(b.begin(), b.end());
  u.assign(na, 1.0f);
  v.assign(nb, 1.0f);
  col.resize(nb);
  k.sinkhorn(kernel.data(), na, nb, af.data(), bf.data(), effort.iterations, u.data(), v.data(),
             col.data());
  // Potentials f = eps log u (a non-finite one, from underflow, restarts at 0), then the two
  // c-transforms that make (f, g) feasible.
  f.resize(na);
  for (std::size_t i = 0; i < na; ++i) {
    const double x = eps * std::log(double{u[i]});
    f[i] = std::isfinite(x) ? x : 0.0;
  }
  g.resize(nb);
  const double bound =
      k.c_transformed_dual(cost.data(), na, nb, a.data(), b.data(), f.data(), g.data());
  if (potentials) {
    potentials->g.assign(g.begin(), g.end());
    potentials->f.resize(na);
    for (std::size_t i = 0; i < na; ++i) {
      double least = std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < nb; ++j) least = std::min(least, cost[i * nb + j] - g[j]);
      potentials->f[i] = least;
    }
  }
  // emd() quantises weights to 2^-52 and costs to 2^-40 of the largest: its answer may lie
  // below this bound by that much, and the bound must stay below it.
  return bound - 1e-11 * max_cost;
}

}  // namespace lcrwmd::ot
