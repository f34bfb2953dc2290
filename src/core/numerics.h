#pragma once
// The numeric constants the CPU and CUDA code share, each defined once, so that both backends
// compute the same distances and prune with the same bounds. Plain C++17 (nvcc includes it).
#include <algorithm>
#include <cstddef>

namespace lcrwmd::numerics {

// The CUDA backend's uncertified phase 1 (ACT, ICT, the quadratic RWMD, TF32): the GEMM
// expansion |e|^2 + |t|^2 - 2 e.t loses relative accuracy as a distance shrinks; below this
// fraction of |e|^2 + |t|^2 the squared distance is recomputed from the vectors. (LC-RWMD's,
// like the CPU's, certifies every estimate instead: cpu/word_bounds.h, cuda/word_terms.h.)
inline constexpr float kPhase1RecomputeBelow = 1e-2f;

// WMD's ground costs (double): below this fraction of |x|^2 + |y|^2 the expansion has lost
// more than ~1e-10 of its relative accuracy, and the cost is recomputed from the differences.
inline constexpr double kWmdCostRecomputeBelow = 1e-4;

// The symmetric LC-RWMD bound B2 is lowered by this fraction of its full sum: its two sums
// round differently, and rounding must never lift the bound above D2 (nor above 0 for a
// document against itself).
inline constexpr float kB2Slack = 1e-4f;

// WMD's float bounds (LC-RWMD, RWMD) are lowered by this fraction of themselves: their
// rounding (< 1e-4 relative) could lift them above a double WMD they equal in exact arithmetic
// (a one-word document: RWMD = WMD).
inline constexpr float kWmdBoundSlack = 1e-3f;

// Pruned top-k computes the exact distances of this many best bounds first: they usually
// settle a good k-th best before the rest are taken in ascending bound order.
inline std::size_t first_refined(std::size_t k, std::size_t n) {
  return std::min(n, std::max(2 * k, k + 64));
}

}  // namespace lcrwmd::numerics
