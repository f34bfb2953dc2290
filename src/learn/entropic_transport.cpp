// Sinkhorn's iterations (learn/entropic_transport.h): each half-step makes one side's marginals
// exact. In scalings u, v of the kernel K_ij = exp(-lambda (C_ij - r_i)), r_i row i's least
// cost (so every row holds a 1), T = diag(u) K diag(v) and the potentials are
// alpha_i = log(u_i) / lambda + r_i, beta_j = log(v_j) / lambda. Where a column of K vanishes
// or a scaling leaves double's range, the same iterations run on the potentials in the log
// domain.
#include "learn/entropic_transport.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "learn/log_sum_exp.h"

namespace lcrwmd {
namespace {

void finish(EntropicTransport& t, std::span<const double> a, std::span<const double> b,
            double lambda) {
  t.value = -1.0 / lambda;
  for (std::size_t i = 0; i < a.size(); ++i) t.value += t.alpha[i] * a[i];
  for (std::size_t j = 0; j < b.size(); ++j) t.value += t.beta[j] * b[j];
}

EntropicTransport log_domain(std::span<const double> a, std::span<const double> b,
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
  finish(t, a, b, lambda);
  return t;
}

bool usable(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return v > 0 && std::isfinite(v); });
}

}  // namespace

EntropicTransport entropic_transport(std::span<const double> a, std::span<const double> b,
                                     std::span<const double> cost, const EntropicOptions& o) {
  const std::size_t n = a.size(), m = b.size();
  const double lambda = o.lambda;
  std::vector<double> least(n), kernel(n * m), column_sums(m, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double* c = cost.data() + i * m;
    least[i] = *std::min_element(c, c + m);
    double* k = kernel.data() + i * m;
    for (std::size_t j = 0; j < m; ++j) {
      k[j] = std::exp(-lambda * (c[j] - least[i]));
      column_sums[j] += k[j];
    }
  }
  if (!usable(column_sums)) return log_domain(a, b, cost, o);
  EntropicTransport t;
  std::vector<double> u(n, 1.0), v(m), kv(n);
  const int rows = static_cast<int>(n), cols = static_cast<int>(m);
  const auto columns = [&] {  // v = b / K'u
    cblas_dgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0, kernel.data(), cols, u.data(), 1, 0.0,
                v.data(), 1);
    for (std::size_t j = 0; j < m; ++j) v[j] = b[j] / v[j];
  };
  columns();
  for (t.iterations = 1;; ++t.iterations) {
    // The columns are exact; row i sums to u_i (K v)_i.
    cblas_dgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0, kernel.data(), cols, v.data(), 1, 0.0,
                kv.data(), 1);
    t.marginal_error = 0;
    for (std::size_t i = 0; i < n; ++i) t.marginal_error += std::fabs(u[i] * kv[i] - a[i]);
    if (!usable(v) || !usable(kv)) return log_domain(a, b, cost, o);
    if (t.marginal_error <= o.tolerance || t.iterations >= o.max_iterations) break;
    for (std::size_t i = 0; i < n; ++i) u[i] = a[i] / kv[i];
    columns();
  }
  t.plan.resize(n * m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) t.plan[i * m + j] = u[i] * kernel[i * m + j] * v[j];
  t.alpha.resize(n);
  t.beta.resize(m);
  for (std::size_t i = 0; i < n; ++i) t.alpha[i] = std::log(u[i]) / lambda + least[i];
  for (std::size_t j = 0; j < m; ++j) t.beta[j] = std::log(v[j]) / lambda;
  finish(t, a, b, lambda);
  return t;
}

}  // namespace lcrwmd
