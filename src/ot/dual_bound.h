#pragma once
// A lower bound on the EMD, far cheaper than solving it and usually within a few percent.
#include <span>
#include <vector>

namespace lcrwmd::ot {

// By weak duality any potentials f, g with f_i + g_j <= cost_ij bound the EMD from below by
// sum_i a_i f_i + sum_j b_j g_j. The potentials come from a few Sinkhorn iterations of the
// entropy-regularised problem (temperature: a small fraction of the mean cost), then are made
// feasible by c-transforms (g_j = min_i cost_ij - f_i, then f likewise), so the result is a
// bound however roughly the iterations converged. Weights are renormalised to 1 in double, as
// by emd(); inputs are assumed valid (emd() checks them).
// How hard the iterations try: temperature (a fraction of the mean cost; lower: closer to the
// EMD, slower to converge) and iterations.
struct DualEffort {
  double temperature;
  int iterations;
};
// The WMD search's two: the quick one for every pair the RWMD leaves a chance, the close one for
// those the quick one leaves. Two leave fewer EMD solves than one bound of middling effort, in
// less time; ACT-1 between the RWMD and the dual bounds, barely tighter than the RWMD, cost
// more than the dual bounds it saved (BENCHMARKS.md, "Exact WMD").
inline constexpr DualEffort kQuickDual{0.05, 3}, kCloseDual{0.02, 16};
// With `potentials`: b's potentials g (nb of them) whose c-transform gives the bound, and that
// c-transform f (na), f_i = min_j cost_ij - g_j, so f_i + g_j <= cost_ij: for reuse against
// other a's (WMD's pricing bound) or to guess the optimal flow's arcs (emd()).
struct Potentials {
  std::vector<double> f, g;
};
double emd_dual_bound(std::span<const double> a, std::span<const double> b,
                      std::span<const double> cost, DualEffort effort,
                      Potentials* potentials = nullptr);

}  // namespace lcrwmd::ot
