// k-medoids (lcrwmd/kmedoids.h).
#include "lcrwmd/kmedoids.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/method.h"
#include "lcrwmd/query.h"

namespace lcrwmd {
namespace {

// Rows of every document's distance from each of `from`, handed to use(row, distances) as the
// pairwise pass streams them.
template <typename Use>
void distances_from(const Index& index, const Searcher& searcher, const SearchOptions& o,
                    const std::vector<std::size_t>& from, Use&& use) {
  const std::size_t n = index.n_docs();
  searcher.pairwise(query_set_from_index(index, from), o,
                    [&](std::size_t first, std::size_t rows, const float* d) {
                      for (std::size_t r = 0; r < rows; ++r) use(first + r, d + r * n);
                    });
}

// k-means++ seeding: the first medoid uniform, each next one drawn with probability
// proportional to its distance from the nearest medoid so far (uniform among the rest where
// all those are 0: duplicates).
std::vector<std::size_t> seed_medoids(const Index& index, const Searcher& searcher,
                                      const SearchOptions& o, std::size_t k, std::mt19937_64& rng) {
  const std::size_t n = index.n_docs();
  std::vector<std::size_t> medoids{std::uniform_int_distribution<std::size_t>(0, n - 1)(rng)};
  std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
  std::vector<char> chosen(n, 0);
  chosen[medoids[0]] = 1;
  while (medoids.size() < k) {
    distances_from(index, searcher, o, {medoids.back()}, [&](std::size_t, const float* d) {
      for (std::size_t i = 0; i < n; ++i) nearest[i] = std::min(nearest[i], double{d[i]});
    });
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) total += chosen[i] ? 0 : nearest[i];
    std::size_t next = n;
    if (total > 0) {
      double at = std::uniform_real_distribution<double>(0, total)(rng);
      for (std::size_t i = 0; i < n && next == n; ++i)
        if (!chosen[i] && (at -= nearest[i]) < 0 && nearest[i] > 0) next = i;
      if (next == n)  // rounding left `at` at the end: the last candidate
        for (std::size_t i = n; i-- > 0 && next == n;)
          if (!chosen[i] && nearest[i] > 0) next = i;
    } else {
      std::size_t pick = std::uniform_int_distribution<std::size_t>(0, n - medoids.size() - 1)(rng);
      for (std::size_t i = 0; i < n && next == n; ++i)
        if (!chosen[i] && pick-- == 0) next = i;
    }
    chosen[next] = 1;
    medoids.push_back(next);
  }
  return medoids;
}

// Each document to its nearest medoid; the objective.
double assign(const Index& index, const Searcher& searcher, const SearchOptions& o, Clustering& c) {
  const std::size_t n = index.n_docs();
  c.assignment.assign(n, 0);
  c.distance.assign(n, std::numeric_limits<float>::infinity());
  distances_from(index, searcher, o, c.medoids, [&](std::size_t cluster, const float* d) {
    for (std::size_t i = 0; i < n; ++i)
      if (d[i] < c.distance[i] || (d[i] == c.distance[i] && cluster < c.assignment[i])) {
        c.distance[i] = d[i];
        c.assignment[i] = cluster;
      }
  });
  // A medoid belongs to its own cluster, even where another medoid is a duplicate of it.
  for (std::size_t m = 0; m < c.medoids.size(); ++m) {
    c.assignment[c.medoids[m]] = m;
    c.distance[c.medoids[m]] = 0;
  }
  double total = 0;
  for (const float d : c.distance) total += d;
  return total;
}

// `count` of `items`, drawn without replacement (all where there are no more).
std::vector<std::size_t> sample(std::vector<std::size_t> items, std::size_t count,
                                std::mt19937_64& rng) {
  if (items.size() <= count) return items;
  for (std::size_t i = 0; i < count; ++i)
    std::swap(items[i],
              items[std::uniform_int_distribution<std::size_t>(i, items.size() - 1)(rng)]);
  items.resize(count);
  std::sort(items.begin(), items.end());
  return items;
}

// Per cluster, its candidates and the members they are scored on.
struct Sample {
  std::vector<std::size_t> candidates;  // the medoid first
  std::vector<std::size_t> scored;
};

// Each candidate's total distance to its cluster's scored members, in `samples`' order.
// Linear-complexity methods give a candidate's whole row for about the price of the members'
// part, so all clusters share one pass over the index. Where each pair is an exact solve
// (MethodInfo::costly_exact: WMD), only the pairs needed are solved: each cluster is searched
// as an index of its candidates and scored members alone, on the CPU, where WMD runs anyway.
std::vector<double> score(const Index& index, const Searcher& searcher, const SearchOptions& o,
                          const std::vector<Sample>& samples, const IndexData* whole) {
  std::vector<double> cost;
  if (!o.method->costly_exact) {
    std::vector<std::size_t> candidates, owner;
    for (std::size_t m = 0; m < samples.size(); ++m)
      for (const std::size_t x : samples[m].candidates) candidates.push_back(x), owner.push_back(m);
    cost.assign(candidates.size(), 0);
    distances_from(index, searcher, o, candidates, [&](std::size_t r, const float* d) {
      for (const std::size_t x : samples[owner[r]].scored) cost[r] += d[x];
    });
    return cost;
  }
  for (const Sample& s : samples) {
    // The sub-index: the candidates (rows 0..), then the scored members that are not one.
    std::vector<std::size_t> docs = s.candidates, columns;
    for (const std::size_t x : s.scored) {
      const auto at = std::find(s.candidates.begin(), s.candidates.end(), x);
      columns.push_back(static_cast<std::size_t>(at - s.candidates.begin()));
      if (at == s.candidates.end()) columns.back() = docs.size(), docs.push_back(x);
    }
    const Index part = Index::from_data(select_documents(*whole, docs));
    const CpuSearcher part_searcher(part);
    std::vector<std::size_t> rows(s.candidates.size());
    std::iota(rows.begin(), rows.end(), 0);
    const std::size_t first = cost.size(), n = part.n_docs();
    cost.resize(first + rows.size(), 0);
    part_searcher.pairwise(query_set_from_index(part, rows), o,
                           [&](std::size_t r0, std::size_t count, const float* d) {
                             for (std::size_t r = 0; r < count; ++r)
                               for (const std::size_t j : columns)
                                 cost[first + r0 + r] += d[r * n + j];
                           });
  }
  return cost;
}

// Moves each medoid to the sampled candidate with the least distance to the sampled members
// (the medoid stays on ties); whether any moved.
bool update(const Index& index, const Searcher& searcher, const ClusterOptions& opt,
            const IndexData* whole, std::mt19937_64& rng, Clustering& c) {
  const std::size_t k = c.medoids.size();
  std::vector<std::vector<std::size_t>> members(k);
  for (std::size_t i = 0; i < c.assignment.size(); ++i) members[c.assignment[i]].push_back(i);
  std::vector<Sample> samples(k);
  for (std::size_t m = 0; m < k; ++m) {
    samples[m].scored = sample(members[m], opt.members, rng);
    samples[m].candidates.push_back(c.medoids[m]);
    for (const std::size_t x : sample(members[m], opt.candidates, rng))
      if (x != c.medoids[m]) samples[m].candidates.push_back(x);
  }
  const std::vector<double> cost = score(index, searcher, opt.search, samples, whole);
  bool moved = false;
  for (std::size_t m = 0, first = 0; m < k; first += samples[m++].candidates.size()) {
    std::size_t best = 0;  // ties: the medoid stays, else the smaller document
    for (std::size_t r = 1; r < samples[m].candidates.size(); ++r)
      if (cost[first + r] < cost[first + best]) best = r;
    if (best != 0) {
      c.medoids[m] = samples[m].candidates[best];
      moved = true;
    }
  }
  return moved;
}

}  // namespace

Clustering k_medoids(const Index& index, const Searcher& searcher, const ClusterOptions& opt) {
  const std::size_t n = index.n_docs();
  if (opt.k == 0 || opt.k > n)
    throw Error("cluster: k must be between 1 and the " + std::to_string(n) + " documents (got " +
                std::to_string(opt.k) + ")");
  if (opt.candidates == 0 || opt.members == 0)
    throw Error("cluster: sample at least one candidate and one member per cluster");
  SearchOptions o = opt.search;
  o.progress = nullptr;
  check_options(o);
  if (o.direction != Direction::symmetric)
    throw OptionError("direction",
                      "clustering needs a symmetric distance: a medoid's distance "
                      "to a member must not depend on their order");
  ClusterOptions run = opt;
  run.search = o;
  std::mt19937_64 rng(opt.seed);
  Clustering c;
  c.medoids = seed_medoids(index, searcher, o, opt.k, rng);
  // What a costly method's medoid updates cut their sub-indexes from.
  const std::optional<IndexData> whole =
      o.method->costly_exact ? std::optional(index.data()) : std::nullopt;
  for (std::size_t it = 0;; ++it) {
    c.objective.push_back(assign(index, searcher, o, c));
    if (opt.progress) opt.progress(it, c.objective.back());
    if (it + 1 >= opt.max_iterations ||
        !update(index, searcher, run, whole ? &*whole : nullptr, rng, c))
      break;
  }
  return c;
}

}  // namespace lcrwmd
