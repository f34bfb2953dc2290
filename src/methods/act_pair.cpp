// ACT-k and ICT (Atasu & Mittelholzer, ICML 2019) of one pair, directly, in double: the
// reference the linear-complexity versions are tested against. Each word of the source side
// sends its mass to the target side's words in ascending order of cost, at most a target's own
// weight to it (ICT), or for at most k such capped steps with the rest at the (k+1)-th nearest
// word's cost (ACT-k; ACT-0 is RWMD). Every EMD-feasible flow respects those capacities, so
// RWMD <= ACT-k <= ACT-(k+1) <= ICT <= WMD.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu/distance_kernels.h"
#include "methods/batch_distance.h"

namespace lcrwmd {
namespace {

// One direction: rows of `cost` (n_from x n_to, row-major) send `from` to capacities `to`.
double constrained_transfers(const std::vector<double>& cost, const std::vector<double>& from,
                             const std::vector<double>& to, std::size_t steps) {
  const std::size_t n_to = to.size();
  std::vector<std::size_t> order(n_to);
  double total = 0;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const double* c = cost.data() + i * n_to;
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Ties in any order: equal costs give the same sum whichever capacity fills first.
    std::sort(order.begin(), order.end(),
              [c](std::size_t a, std::size_t b) { return c[a] < c[b]; });
    double left = from[i];
    std::size_t s = 0;
    for (; s < n_to && s < steps && left > 0; ++s) {
      const double moved = std::min(left, to[order[s]]);
      total += moved * c[order[s]];
      left -= moved;
    }
    if (left > 0) total += left * c[order[std::min(s, n_to - 1)]];
  }
  return total;
}

}  // namespace

ActPair act_pair(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                 std::size_t steps) {
  const std::size_t m = index.dim();
  const std::size_t db = index.indptr()[doc], dh = index.indptr()[doc + 1] - db;
  const std::size_t qb = qs.indptr[q], qh = qs.length(q);
  std::vector<double> doc_to_query(dh * qh), query_to_doc(qh * dh), p(dh), w(qh);
  for (std::size_t a = 0; a < dh; ++a) {
    p[a] = index.values()[db + a];
    for (std::size_t t = 0; t < qh; ++t) {
      const double c =
          std::sqrt(cpu::sq_dist_f64(index.vector(index.indices()[db + a]),
                                     query_word_vector(index, qs, qs.words[qb + t]), m));
      doc_to_query[a * qh + t] = query_to_doc[t * dh + a] = c;
    }
  }
  for (std::size_t t = 0; t < qh; ++t) w[t] = qs.weights[qb + t];
  // Both sides renormalised to 1 in double, as wmd_pair does: the float weights sum to 1 only
  // within rounding, and ICT may touch the WMD.
  for (auto* side : {&p, &w}) {
    const double total = std::accumulate(side->begin(), side->end(), 0.0);
    for (double& x : *side) x /= total;
  }
  return {constrained_transfers(doc_to_query, p, w, steps),
          constrained_transfers(query_to_doc, w, p, steps)};
}

}  // namespace lcrwmd
