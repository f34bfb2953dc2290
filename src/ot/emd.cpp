// Exact EMD on a complete bipartite graph with LEMON's network simplex (block-search pivots),
// in integer arithmetic as LEMON requires (see emd.h for the quantisation).
#include "lcrwmd/emd.h"

#include <lemon/network_simplex.h>
#include <lemon/static_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lcrwmd/error.h"

namespace lcrwmd {
namespace {

using Graph = lemon::StaticDigraph;
using Solver = lemon::NetworkSimplex<Graph, std::int64_t, std::int64_t>;

constexpr int kWeightBits = 52;  // flows stay below 2^53: exact in int64 and in double
constexpr int kCostBits = 40;    // node potentials (sums of costs) stay far below 2^63

// Weights as integers summing to exactly 2^kWeightBits: rounded, with the rounding excess
// taken from (or given to) the largest weight, which therefore stays non-negative.
std::vector<std::int64_t> quantise_weights(std::span<const double> w, const char* side) {
  if (w.empty()) throw Error(std::string("emd: the ") + side + " histogram is empty");
  double total = 0;
  for (double x : w) {
    if (!std::isfinite(x) || x < 0)
      throw Error(std::string("emd: the ") + side +
                  " histogram has a negative or non-finite weight");
    total += x;
  }
  if (!(total > 0) || !std::isfinite(total))
    throw Error(std::string("emd: the ") + side + " histogram does not have a positive finite sum");
  const double scale = std::ldexp(1.0, kWeightBits);
  std::vector<std::int64_t> q(w.size());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    q[i] = std::llround(w[i] / total * scale);
    sum += q[i];
  }
  *std::max_element(q.begin(), q.end()) += (std::int64_t{1} << kWeightBits) - sum;
  return q;
}

// Where every cost is 0 any flow is optimal: the north-west corner rule gives one.
void north_west_corner(const std::vector<std::int64_t>& qa, const std::vector<std::int64_t>& qb,
                       std::vector<double>& flow) {
  std::int64_t left_a = qa[0], left_b = qb[0];
  for (std::size_t i = 0, j = 0; i < qa.size() && j < qb.size();) {
    const std::int64_t f = std::min(left_a, left_b);
    flow[i * qb.size() + j] = std::ldexp(static_cast<double>(f), -kWeightBits);
    left_a -= f;
    left_b -= f;
    if (left_a == 0 && ++i < qa.size()) left_a = qa[i];
    if (left_b == 0 && ++j < qb.size()) left_b = qb[j];
  }
}

}  // namespace

double emd(std::span<const double> a, std::span<const double> b, std::span<const double> cost,
           std::vector<double>* flow) {
  const std::size_t na = a.size(), nb = b.size();
  if (cost.size() != na * nb)
    throw Error("emd: cost matrix has " + std::to_string(cost.size()) + " entries, expected " +
                std::to_string(na) + " x " + std::to_string(nb));
  const std::vector<std::int64_t> qa = quantise_weights(a, "first");
  const std::vector<std::int64_t> qb = quantise_weights(b, "second");
  double max_cost = 0;
  for (double c : cost) {
    if (!std::isfinite(c) || c < 0) throw Error("emd: a cost is negative or not finite");
    max_cost = std::max(max_cost, c);
  }
  if (flow) flow->assign(na * nb, 0.0);
  if (max_cost == 0) {
    if (flow) north_west_corner(qa, qb, *flow);
    return 0;
  }
  if (na == 1 || nb == 1) {  // one side has a single bin: the only flow is the other side
    double total = 0;
    for (std::size_t i = 0; i < na * nb; ++i) {
      const auto f = static_cast<double>(na == 1 ? qb[i] : qa[i]);
      total += f * cost[i];
      if (flow) (*flow)[i] = std::ldexp(f, -kWeightBits);
    }
    return std::ldexp(total, -kWeightBits);
  }

  // Nodes 0..na-1 supply, na..na+nb-1 demand; arcs in source order, as StaticDigraph wants.
  thread_local std::vector<std::pair<int, int>> arcs;
  arcs.clear();
  arcs.reserve(na * nb);
  for (std::size_t i = 0; i < na; ++i)
    for (std::size_t j = 0; j < nb; ++j)
      arcs.emplace_back(static_cast<int>(i), static_cast<int>(na + j));
  Graph g;
  g.build(static_cast<int>(na + nb), arcs.begin(), arcs.end());
  Graph::NodeMap<std::int64_t> supply(g);
  for (std::size_t i = 0; i < na; ++i) supply[g.node(static_cast<int>(i))] = qa[i];
  for (std::size_t j = 0; j < nb; ++j) supply[g.node(static_cast<int>(na + j))] = -qb[j];
  Graph::ArcMap<std::int64_t> icost(g);
  const double cost_scale = std::ldexp(1.0, kCostBits) / max_cost;
  // Costs are >= 0 (checked above): rounding by truncation of x + 0.5, which vectorises.
  for (std::size_t e = 0; e < na * nb; ++e)
    icost[g.arc(static_cast<int>(e))] = static_cast<std::int64_t>(cost[e] * cost_scale + 0.5);

  Solver solver(g);
  solver.supplyMap(supply).costMap(icost);
  const Solver::ProblemType status = solver.run(Solver::BLOCK_SEARCH);
  if (status != Solver::OPTIMAL)
    throw Error(std::string("emd: the network simplex did not find an optimal flow (") +
                (status == Solver::INFEASIBLE ? "infeasible" : "unbounded") + ")");
  double total = 0;
  for (std::size_t e = 0; e < na * nb; ++e) {
    const std::int64_t f = solver.flow(g.arc(static_cast<int>(e)));
    if (f == 0) continue;
    total += static_cast<double>(f) * cost[e];
    if (flow) (*flow)[e] = std::ldexp(static_cast<double>(f), -kWeightBits);
  }
  return std::ldexp(total, -kWeightBits);
}

}  // namespace lcrwmd
