// Sinkhorn's iterations on the potentials (learn/entropic_transport.h): each half-step makes one
// side's marginals exact, a log-sum-exp over the other side, shifted by its maximum.
#include "learn/entropic_transport.h"

#include <algorithm>
#include <cmath>

#include "learn/log_sum_exp.h"

namespace lcrwmd {

EntropicTransport entropic_transport(std::span<const double> a, std::span<const double> b,
                                     std::span<const double> cost, const EntropicOptions& o) {
  const std::size_t n = a.size(), m = b.size();
  const double lambda = o.lambda;
  EntropicTransport t;
  t.alpha.assign(n, 0.0);
  t.beta.assign(m, 0.0);
  std::vector<double> log_a(n), log_b(m);
  for (std::size_t i = 0; i < n; ++i) log_a[i] = std::log(a[i]);
  for (std::size_t j = 0; j < m; ++j) log_b[j] = std::log(b[j]);
  const auto c = [&](std::size_t i, std::size_t j) { return cost[i * m + j]; };
  // Each side's potentials given the other's: that side's marginals made exact.
  const auto rows = [&](std::vector<double>& alpha) {
    for (std::size_t i = 0; i < n; ++i)
      alpha[i] = (log_a[i] -
                  log_sum_exp(m, [&](std::size_t j) { return lambda * (t.beta[j] - c(i, j)); })) /
                 lambda;
  };
  const auto columns = [&] {
    for (std::size_t j = 0; j < m; ++j)
      t.beta[j] = (log_b[j] -
                   log_sum_exp(n, [&](std::size_t i) { return lambda * (t.alpha[i] - c(i, j)); })) /
                  lambda;
  };
  columns();
  std::vector<double> next(n);
  for (t.iterations = 1;; ++t.iterations) {
    // The columns are exact; the next rows' potentials say how far the rows are: row i sums to
    // a_i exp(lambda (alpha_i - next_i)).
    rows(next);
    t.marginal_error = 0;
    for (std::size_t i = 0; i < n; ++i)
      t.marginal_error += a[i] * std::fabs(std::expm1(lambda * (t.alpha[i] - next[i])));
    if (t.marginal_error <= o.tolerance || t.iterations >= o.max_iterations) break;
    t.alpha.swap(next);
    columns();
  }
  t.plan.resize(n * m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      t.plan[i * m + j] = std::exp(lambda * (t.alpha[i] + t.beta[j] - c(i, j)));
  t.value = -1.0 / lambda;
  for (std::size_t i = 0; i < n; ++i) t.value += t.alpha[i] * a[i];
  for (std::size_t j = 0; j < m; ++j) t.value += t.beta[j] * b[j];
  return t;
}

}  // namespace lcrwmd
