#pragma once
// log sum_k exp(x_k), shifted by the largest term so that no range of x overflows or underflows;
// -infinity for no terms (or only -infinity), whose sum is 0.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

namespace lcrwmd {

template <typename Term>
double log_sum_exp(std::size_t n, Term&& x) {
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) top = std::max(top, x(k));
  if (top == -std::numeric_limits<double>::infinity()) return top;
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += std::exp(x(k) - top);
  return top + std::log(sum);
}

inline double log_sum_exp(std::span<const double> x) {
  return log_sum_exp(x.size(), [&](std::size_t k) { return x[k]; });
}

}  // namespace lcrwmd
