// Every pair within a distance (lcrwmd/pairs.h).
#include "lcrwmd/pairs.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

void pairs_within(const Index& index, const Searcher& searcher, float max_distance,
                  const SearchOptions& options, const PairSink& sink, SearchStats* stats) {
  SearchOptions o = options;
  o.max_distance = max_distance;
  o.progress = nullptr;
  check_options(o);
  if (o.direction != Direction::symmetric)
    throw OptionError("direction",
                      "pairs need a symmetric distance: a pair's must not depend on its order");
  const std::size_t n = index.n_docs();
  // Documents searched at once: their rows of results (n neighbours at most each) in 256 MiB.
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  const std::size_t batch = std::clamp<std::size_t>(
      kBytes / (std::max<std::size_t>(n, 1) * (sizeof(float) + sizeof(std::int64_t))), 1, 4096);
  SearchStats total;
  std::vector<std::size_t> docs;
  std::vector<Pair> found;
  for (std::size_t begin = 0; begin < n; begin += batch) {
    const std::size_t end = std::min(n, begin + batch);
    docs.resize(end - begin);
    std::iota(docs.begin(), docs.end(), begin);
    SearchStats st;
    const SearchResults r = searcher.search(query_set_from_index(index, docs), n, o, &st);
    accumulate(total, st);
    found.clear();
    for (std::size_t q = 0; q < r.n_queries; ++q)
      for (std::size_t t = 0; t < r.k && r.indices[q * r.k + t] >= 0; ++t)
        if (const auto b = static_cast<std::size_t>(r.indices[q * r.k + t]); b > begin + q)
          found.push_back({begin + q, b, r.distances[q * r.k + t]});
    sink(found);
    if (options.progress) options.progress(end, n);
  }
  if (stats) *stats = total;
}

}  // namespace lcrwmd
