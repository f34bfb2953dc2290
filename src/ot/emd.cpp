// Exact EMD on a complete bipartite graph with LEMON's network simplex (block-search pivots),
// in integer arithmetic as LEMON requires (see emd.h for the quantisation).
#include "lcrwmd/emd.h"

#include <lemon/network_simplex.h>
#include <lemon/static_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "lcrwmd/error.h"
#include "ot/dual_bound.h"

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

// The north-west corner rule's flow, a feasible one: visit(i, j, flow) for each of its arcs.
template <typename Visit>
void north_west_corner(const std::vector<std::int64_t>& qa, const std::vector<std::int64_t>& qb,
                       Visit visit) {
  std::int64_t left_a = qa[0], left_b = qb[0];
  for (std::size_t i = 0, j = 0; i < qa.size() && j < qb.size();) {
    const std::int64_t f = std::min(left_a, left_b);
    visit(i, j, f);
    left_a -= f;
    left_b -= f;
    if (left_a == 0 && ++i < qa.size()) left_a = qa[i];
    if (left_b == 0 && ++j < qb.size()) left_b = qb[j];
  }
}

// Column generation. An optimal flow uses at most na + nb - 1 of the na x nb arcs, and
// approximate dual potentials (ot/dual_bound.h's few Sinkhorn iterations, made feasible) tell
// which: arcs of small reduced cost cost_ij - f_i - g_j. LEMON solves on those, each row's and
// column's cheapest by reduced cost and the north-west corner's (a feasible flow, so the
// restricted problem always has one); its optimal potentials then price every arc exactly, in
// the integers the solver used. No arc of negative reduced cost: the flow is optimal for the
// complete graph (primal and dual feasible, complementary slack). Otherwise those arcs join
// and it solves again: a few rounds of a tenth of the arcs take less time than one solve on
// all of them (BENCHMARKS.md, "Exact WMD").
constexpr std::size_t kGuessArcsFrom = 1024;  // na * nb; below, every arc
constexpr double kReducedCostSlack = 0.04;    // of the mean cost

void guess_arcs(std::span<const double> a, std::span<const double> b, std::span<const double> cost,
                const std::vector<std::int64_t>& qa, const std::vector<std::int64_t>& qb,
                std::vector<char>& in) {
  const std::size_t na = a.size(), nb = b.size();
  in.assign(na * nb, 0);
  thread_local ot::Potentials dual;
  thread_local std::vector<double> col_least;
  thread_local std::vector<std::size_t> col_arg;
  ot::emd_dual_bound(a, b, cost, ot::kCloseDual, &dual);
  double mean = 0;
  for (double c : cost) mean += c;
  const double slack = kReducedCostSlack * mean / static_cast<double>(na * nb);
  col_least.assign(nb, std::numeric_limits<double>::infinity());
  col_arg.assign(nb, 0);
  char* use = in.data();
  const double* g = dual.g.data();
  double* cl = col_least.data();
  std::size_t* ca = col_arg.data();
  for (std::size_t i = 0; i < na; ++i) {
    const double* c = cost.data() + i * nb;
    const double fi = dual.f[i];
    double least = std::numeric_limits<double>::infinity();
    std::size_t arg = 0;
    for (std::size_t j = 0; j < nb; ++j) {
      const double r = c[j] - fi - g[j];
      use[i * nb + j] = r <= slack;
      if (r < least) least = r, arg = j;
      if (r < cl[j]) cl[j] = r, ca[j] = i;
    }
    use[i * nb + arg] = 1;
  }
  for (std::size_t j = 0; j < nb; ++j) use[ca[j] * nb + j] = 1;
  north_west_corner(qa, qb,
                    [&](std::size_t i, std::size_t j, std::int64_t) { use[i * nb + j] = 1; });
}

// The optimum on the arcs marked in `in`: arcs (as i * nb + j), their flows, node potentials.
struct Restricted {
  std::vector<std::size_t> arcs;
  std::vector<std::int64_t> flow, potential;
};

void solve_on(const std::vector<char>& in, std::size_t na, std::size_t nb,
              const std::vector<std::int64_t>& qa, const std::vector<std::int64_t>& qb,
              const std::vector<std::int64_t>& icost, Restricted& out) {
  // Nodes 0..na-1 supply, na..na+nb-1 demand; arcs in source order, as StaticDigraph wants.
  thread_local std::vector<std::pair<int, int>> ends;
  ends.clear();
  out.arcs.clear();
  const char* use = in.data();
  for (std::size_t i = 0; i < na; ++i)
    for (std::size_t j = 0; j < nb; ++j)
      if (use[i * nb + j]) {
        ends.emplace_back(static_cast<int>(i), static_cast<int>(na + j));
        out.arcs.push_back(i * nb + j);
      }
  Graph g;
  g.build(static_cast<int>(na + nb), ends.begin(), ends.end());
  Graph::NodeMap<std::int64_t> supply(g);
  for (std::size_t i = 0; i < na; ++i) supply[g.node(static_cast<int>(i))] = qa[i];
  for (std::size_t j = 0; j < nb; ++j) supply[g.node(static_cast<int>(na + j))] = -qb[j];
  Graph::ArcMap<std::int64_t> arc_cost(g);
  for (std::size_t k = 0; k < out.arcs.size(); ++k)
    arc_cost[g.arc(static_cast<int>(k))] = icost[out.arcs[k]];
  Solver solver(g);
  solver.supplyMap(supply).costMap(arc_cost);
  const Solver::ProblemType status = solver.run(Solver::BLOCK_SEARCH);
  if (status != Solver::OPTIMAL)
    throw Error(std::string("emd: the network simplex did not find an optimal flow (") +
                (status == Solver::INFEASIBLE ? "infeasible" : "unbounded") + ")");
  out.flow.resize(out.arcs.size());
  for (std::size_t k = 0; k < out.arcs.size(); ++k)
    out.flow[k] = solver.flow(g.arc(static_cast<int>(k)));
  out.potential.resize(na + nb);
  for (std::size_t v = 0; v < na + nb; ++v)
    out.potential[v] = solver.potential(g.node(static_cast<int>(v)));
}

// LEMON's reduced cost of arc i -> j is cost + potential(i) - potential(j); optimal where no
// arc's is negative. Marks those that are, and says whether there were none.
bool all_priced_out(const std::vector<std::int64_t>& icost, std::size_t na, std::size_t nb,
                    const std::vector<std::int64_t>& potential, std::vector<char>& in) {
  // Branch-free: arcs already in have reduced cost >= 0 at the restricted optimum.
  char* use = in.data();
  const std::int64_t* pj = potential.data() + na;
  std::size_t negative = 0;
  for (std::size_t i = 0; i < na; ++i) {
    const std::int64_t* c = icost.data() + i * nb;
    const std::int64_t pi = potential[i];
    char* u = use + i * nb;
    for (std::size_t j = 0; j < nb; ++j) {
      const bool below = c[j] + pi - pj[j] < 0;
      negative += below;
      u[j] |= static_cast<char>(below);
    }
  }
  return negative == 0;
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
  bool valid = true;  // checked after the loop, which then vectorises
  for (double c : cost) {
    valid &= c >= 0 && c <= std::numeric_limits<double>::max();
    max_cost = std::max(max_cost, c);
  }
  if (!valid) throw Error("emd: a cost is negative or not finite");
  if (flow) flow->assign(na * nb, 0.0);
  if (max_cost == 0) {
    // Where every cost is 0 any flow is optimal.
    if (flow)
      north_west_corner(qa, qb, [&](std::size_t i, std::size_t j, std::int64_t f) {
        (*flow)[i * nb + j] = std::ldexp(static_cast<double>(f), -kWeightBits);
      });
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

  // Costs >= 0 (checked above): rounding by truncation of x + 0.5, which vectorises.
  thread_local std::vector<std::int64_t> icost;
  icost.resize(na * nb);
  const double cost_scale = std::ldexp(1.0, kCostBits) / max_cost;
  for (std::size_t e = 0; e < na * nb; ++e)
    icost[e] = static_cast<std::int64_t>(cost[e] * cost_scale + 0.5);
  thread_local std::vector<char> in;
  if (na * nb < kGuessArcsFrom)
    in.assign(na * nb, 1);
  else
    guess_arcs(a, b, cost, qa, qb, in);
  thread_local Restricted solved;
  do {
    solve_on(in, na, nb, qa, qb, icost, solved);
  } while (!all_priced_out(icost, na, nb, solved.potential, in));
  double total = 0;
  for (std::size_t k = 0; k < solved.arcs.size(); ++k) {
    const std::size_t e = solved.arcs[k];
    const std::int64_t f = solved.flow[k];
    if (f == 0) continue;
    total += static_cast<double>(f) * cost[e];
    if (flow) (*flow)[e] = std::ldexp(static_cast<double>(f), -kWeightBits);
  }
  return std::ldexp(total, -kWeightBits);
}

}  // namespace lcrwmd
