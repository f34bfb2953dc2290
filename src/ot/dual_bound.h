#pragma once
// A lower bound on the EMD, far cheaper than solving it and usually within a few percent.
#include <span>

namespace lcrwmd::ot {

// By weak duality any potentials f, g with f_i + g_j <= cost_ij bound the EMD from below by
// sum_i a_i f_i + sum_j b_j g_j. The potentials come from a few Sinkhorn iterations of the
// entropy-regularised problem (temperature: a small fraction of the mean cost), then are made
// feasible by c-transforms (g_j = min_i cost_ij - f_i, then f likewise), so the result is a
// bound however roughly the iterations converged. Weights are renormalised to 1 in double, as
// by emd(); inputs are assumed valid (emd() checks them).
double emd_dual_bound(std::span<const double> a, std::span<const double> b,
                      std::span<const double> cost);

}  // namespace lcrwmd::ot
