#pragma once
// k-medoids clustering of an index's documents under any of the distances: each cluster is
// represented by one of its documents. Every iteration assigns each document to its nearest
// medoid in one many-to-many pass (the medoids are the queries: what LC-RWMD is fast at), then
// moves each medoid to the candidate, from a bounded sample of its cluster, with the least
// total distance to a bounded sample of the members. Seeded as k-means++ seeds (each next
// medoid drawn with probability proportional to its distance from the nearest chosen one), so
// a seed gives the same clustering every time.
//
//   CpuSearcher searcher(index);
//   Clustering c = k_medoids(index, searcher, {.k = 20});
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

struct ClusterOptions {
  std::size_t k = 8;
  std::uint64_t seed = 0;
  std::size_t max_iterations = 20;
  std::size_t candidates = 32;  // per cluster and iteration: members tried as its medoid
  std::size_t members = 256;    // per cluster and iteration: members a candidate is scored on
  SearchOptions search;         // the distance: method (symmetric), act_steps, batch
  // After each assignment: (iteration, the sum of every document's distance to its medoid).
  std::function<void(std::size_t, double)> progress;
};

struct Clustering {
  std::vector<std::size_t> medoids;     // per cluster: its medoid's document
  std::vector<std::size_t> assignment;  // per document: its cluster (ties: the smaller one)
  std::vector<float> distance;          // per document: from its medoid
  std::vector<double> objective;        // per assignment: the sum of those distances
};

// `searcher` searches `index`. An Error where k is 0 or above the documents, or the search is
// one-sided (a medoid's distance to a member must not depend on their order).
Clustering k_medoids(const Index& index, const Searcher& searcher, const ClusterOptions& options);

}  // namespace lcrwmd
