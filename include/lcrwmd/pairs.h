#pragma once
// Every pair of an index's documents within a distance: a self-join for near-duplicates. Each
// pair comes once (a < b), without self-pairs, from a range search of each document against the
// index, so a bounded method computes exact distances only where its bound is within range.
//
//   CpuSearcher searcher(index);
//   pairs_within(index, searcher, 0.5f, {}, [&](std::span<const Pair> found) { ... });
#include <cstddef>
#include <functional>
#include <span>

#include "lcrwmd/index.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

struct Pair {
  std::size_t a, b;  // documents of the index, a < b
  float distance;    // the distance of query a to document b
};

// Called with each block of documents' pairs, in order of a (then distance, then b).
using PairSink = std::function<void(std::span<const Pair>)>;

// `searcher` searches `index`. options: the method (symmetric: a pair's distance must not
// depend on its order), pruning, act_steps, progress (documents done, documents in all);
// max_distance is set from `max_distance`. An Error for a one-sided search or a range that is
// not a number.
void pairs_within(const Index& index, const Searcher& searcher, float max_distance,
                  const SearchOptions& options, const PairSink& sink, SearchStats* stats = nullptr);

}  // namespace lcrwmd
