#pragma once
// What the searchers over parts of a collection (CollectionSearcher's segments, RankShards' and
// RankQueries' ranks) share: the parts' top-k lists of a batch of queries merged in the
// collection's order (ascending distance, ties to the smaller document), as they come; the top-k
// of whole rows (a method answering from every document's evidence); and how many rows of the
// full matrix pairwise assembles at once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "lcrwmd/search.h"
#include "lcrwmd/topk.h"

namespace lcrwmd {

// Rows of the full matrix (n documents, nq queries) put together at once: 256 MiB's worth, at
// least one row.
inline std::size_t pairwise_rows_at_once(std::size_t n, std::size_t nq) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  return std::clamp<std::size_t>(kBytes / (sizeof(float) * std::max<std::size_t>(n, 1)), 1,
                                 std::max<std::size_t>(nq, 1));
}

// Each query's k best of its row of n distances, the rows as `all_distances` hands them to its
// sink (a block at a time).
template <typename AllDistances>
SearchResults top_k_of_rows(std::size_t n_queries, std::size_t n, std::size_t k,
                            AllDistances&& all_distances) {
  SearchResults r = empty_results(n_queries, std::min(k, n));
  all_distances([&](std::size_t first, std::size_t count, const float* d) {
#pragma omp parallel for schedule(dynamic)
    for (std::size_t j = 0; j < count; ++j) {
      const std::vector<Neighbor> top = select_topk({d + j * n, n}, r.k);
      for (std::size_t t = 0; t < top.size(); ++t) {
        r.distances[(first + j) * r.k + t] = top[t].distance;
        r.indices[(first + j) * r.k + t] = static_cast<std::int64_t>(top[t].index);
      }
    }
  });
  return r;
}

class ShardMerge {
 public:
  ShardMerge(std::size_t n_queries, std::size_t k) : k_(k), best_(n_queries, TopK(k)) {}

  // A shard's results, its documents numbered from `offset` in the collection.
  void add(const SearchResults& part, std::int64_t offset) {
    add(part, [offset](std::int64_t doc) { return doc + offset; });
  }
  // A shard's results, its document i the collection's to_collection(i) (-1: left out).
  template <typename ToCollection>
  void add(const SearchResults& part, ToCollection&& to_collection) {
    for (std::size_t q = 0; q < best_.size(); ++q)
      for (std::size_t t = 0; t < part.k; ++t)
        if (const std::int64_t doc = part.indices[q * part.k + t]; doc >= 0)
          if (const std::int64_t c = to_collection(doc); c >= 0)
            best_[q].push({part.distances[q * part.k + t], c});
  }

  // Query q's k-th best so far (+inf while it has fewer): documents after these need to beat it.
  float kth(std::size_t q) const {
    return best_[q].full() ? best_[q].worst().distance : std::numeric_limits<float>::infinity();
  }

  SearchResults take() {
    SearchResults out = empty_results(best_.size(), k_);
    for (std::size_t q = 0; q < best_.size(); ++q) {
      const std::vector<Neighbor> row = best_[q].take_sorted();
      for (std::size_t t = 0; t < row.size(); ++t) {
        out.distances[q * k_ + t] = row[t].distance;
        out.indices[q * k_ + t] = row[t].index;
      }
    }
    return out;
  }

 private:
  std::size_t k_;
  std::vector<TopK> best_;
};

}  // namespace lcrwmd
