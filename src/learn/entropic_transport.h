#pragma once
// Entropy-regularised optimal transport between two small histograms (Cuturi's Sinkhorn: the
// scalings of a kernel whose rows are shifted by their least cost, two matrix-vector products
// (BLAS) an iteration; in the log domain, twenty times slower, only where a cost so far above
// its row's least would make the kernel vanish): what metric learning differentiates, since its
// plan and potentials are its value's exact gradients.
//
//   min over plans T >= 0 with T 1 = a, T' 1 = b of  <T, C> + (1/lambda) sum T (log T - 1)
//
// At the optimum T_ij = exp(lambda (alpha_i + beta_j - C_ij)), and the value is
// <alpha, a> + <beta, b> - 1/lambda; its gradient with respect to C is T, and with respect to a
// and b (on the simplex) alpha and beta, up to a constant (the envelope theorem).
#include <cstddef>
#include <span>
#include <vector>

#include "lcrwmd/learn.h"

namespace lcrwmd {

struct EntropicTransport {
  double value = 0;
  std::vector<double> plan;         // a.size() x b.size(), row-major
  std::vector<double> alpha, beta;  // the dual potentials
  std::size_t iterations = 0;
  double marginal_error = 0;  // sum |T 1 - a| when it stopped (its columns are exact)
};

// a and b: positive, each summing to 1; cost: a.size() x b.size(), row-major, finite.
EntropicTransport entropic_transport(std::span<const double> a, std::span<const double> b,
                                     std::span<const double> cost, const EntropicOptions& options);

}  // namespace lcrwmd
