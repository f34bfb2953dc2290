#pragma once
// The exact earth mover's distance between two histograms, by LEMON's network simplex.
//
//   double d = emd(a, b, cost);   // cost: a.size() x b.size(), row-major
#include <span>
#include <vector>

namespace lcrwmd {

// min sum_ij f_ij cost_ij over flows f >= 0 with row sums a and column sums b, both weight
// vectors first renormalised to 1 in double. Throws lcrwmd::Error for empty, negative or
// non-finite input, and where the solver does not report an optimal flow.
//
// LEMON's network simplex is exact only on integer data, so the solver sees the weights in
// units of 2^-52 and the costs in units of 2^-40 of the largest cost; the returned value is
// the true cost of the flow it finds (in double), within ~1e-12 of the largest cost of the
// optimum of the unquantised problem. With `flow`, the solver's optimal flow goes there:
// a.size() x b.size(), row-major, summing to 1.
double emd(std::span<const double> a, std::span<const double> b, std::span<const double> cost,
           std::vector<double>* flow = nullptr);

}  // namespace lcrwmd
