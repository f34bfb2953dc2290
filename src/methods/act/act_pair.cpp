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
#include "methods/pair_distances.h"

namespace lcrwmd {
namespace {

// One pair: costs, document words x query words (row-major), and both sides' weights
// renormalised to 1 in double, as wmd_pair does (the float weights sum to 1 only within
// rounding, and ICT may touch the WMD).
struct ActProblem {
  std::size_t dh = 0, qh = 0;
  std::vector<double> cost, doc_weights, query_weights;
};

void act_problem(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                 ActProblem& out) {
  const std::size_t m = index.dim();
  const std::size_t db = index.indptr()[doc], qb = qs.indptr[q];
  out.dh = index.indptr()[doc + 1] - db;
  out.qh = qs.length(q);
  out.cost.resize(out.dh * out.qh);
  out.doc_weights.assign(index.values().begin() + static_cast<std::ptrdiff_t>(db),
                         index.values().begin() + static_cast<std::ptrdiff_t>(db + out.dh));
  out.query_weights.assign(qs.weights.begin() + static_cast<std::ptrdiff_t>(qb),
                           qs.weights.begin() + static_cast<std::ptrdiff_t>(qb + out.qh));
  for (std::size_t a = 0; a < out.dh; ++a)
    for (std::size_t t = 0; t < out.qh; ++t)
      out.cost[a * out.qh + t] =
          std::sqrt(cpu::sq_dist_f64(index.vector(index.indices()[db + a]),
                                     query_word_vector(index, qs, qs.words[qb + t]), m));
  for (auto* side : {&out.doc_weights, &out.query_weights}) {
    const double total = std::accumulate(side->begin(), side->end(), 0.0);
    for (double& x : *side) x /= total;
  }
}

// One direction: word i of `from` sends from[i] to the words of `to`; the cost of (i, t) is
// cost[i * row_stride + t * col_stride] (the pair's matrix read either way round). T is double
// for the reference, float for the pair bounds the search computes from cached distances.
// Where `moves` is given, each transfer is appended to it as {i, t, mass, cost}.
template <typename T>
T constrained_transfers(const T* cost, std::size_t row_stride, std::size_t col_stride,
                        const T* from, std::size_t n_from, const T* to, std::size_t n_to,
                        std::size_t steps, std::vector<PairFlow>* moves = nullptr) {
  thread_local std::vector<std::size_t> order;
  order.resize(n_to);
  const std::size_t reach = reachable_words(steps, n_to);
  T total = 0;
  for (std::size_t i = 0; i < n_from; ++i) {
    const auto c = [&](std::size_t t) { return cost[i * row_stride + t * col_stride]; };
    // Ties to the smaller position: the linear-complexity versions order words the same way.
    const auto nearer = [&](std::size_t a, std::size_t b) {
      return c(a) < c(b) || (c(a) == c(b) && a < b);
    };
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Ascending order as far as the transfer reaches, a few words at a time (ICT mostly
    // spends a word's mass long before the last target).
    std::size_t sorted = 0;
    const auto sort_through = [&](std::size_t s) {
      if (s < sorted) return;
      const std::size_t upto = std::min(reach, std::max(s + 1, 2 * sorted + 4));
      std::partial_sort(order.begin() + static_cast<std::ptrdiff_t>(sorted),
                        order.begin() + static_cast<std::ptrdiff_t>(upto), order.end(), nearer);
      sorted = upto;
    };
    T left = from[i];
    std::size_t s = 0;
    for (; s + 1 < reach && left > 0; ++s) {  // reach <= steps + 1: at most `steps` capped
      sort_through(s);
      const T moved = std::min(left, to[order[s]]);
      total += moved * c(order[s]);
      left -= moved;
      if (moves) moves->push_back({i, order[s], moved, c(order[s])});
    }
    if (left > 0) {
      sort_through(s);
      total += left * c(order[s]);
      if (moves) moves->push_back({i, order[s], left, c(order[s])});
    }
  }
  return total;
}

double doc_to_query(const ActProblem& a, std::size_t steps,
                    std::vector<PairFlow>* moves = nullptr) {
  return constrained_transfers(a.cost.data(), a.qh, 1, a.doc_weights.data(), a.dh,
                               a.query_weights.data(), a.qh, steps, moves);
}

double query_to_doc(const ActProblem& a, std::size_t steps,
                    std::vector<PairFlow>* moves = nullptr) {
  return constrained_transfers(a.cost.data(), 1, a.qh, a.query_weights.data(), a.qh,
                               a.doc_weights.data(), a.dh, steps, moves);
}

}  // namespace

ActPair act_pair(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                 std::size_t steps) {
  thread_local ActProblem a;
  act_problem(index, doc, qs, q, a);
  return {doc_to_query(a, steps), query_to_doc(a, steps)};
}

ActPair act_pair_moves(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                       std::size_t steps, std::vector<PairFlow>& doc_moves,
                       std::vector<PairFlow>& query_moves) {
  thread_local ActProblem a;
  act_problem(index, doc, qs, q, a);
  doc_moves.clear();
  query_moves.clear();
  const double d1 = doc_to_query(a, steps, &doc_moves);
  const double d2 = query_to_doc(a, steps, &query_moves);
  // The query's moves as the other PairFlows: document word first.
  for (PairFlow& f : query_moves) std::swap(f.doc_word, f.query_word);
  return {d1, d2};
}

float act_from_costs(const float* cost, std::size_t dh, std::size_t qh, const float* doc_weights,
                     const float* query_weights, std::size_t steps, ActDirection direction) {
  return direction == ActDirection::doc_to_query
             ? constrained_transfers(cost, qh, 1, doc_weights, dh, query_weights, qh, steps)
             : constrained_transfers(cost, 1, qh, query_weights, qh, doc_weights, dh, steps);
}

}  // namespace lcrwmd
