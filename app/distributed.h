#pragma once
// Search spread over the ranks of a Cluster (mpirun), equal to one process's byte for byte:
// each rank takes a contiguous part of the documents (an Index::shard of the memory-mapped
// index) or of the queries, and rank 0 merges the parts with lcrwmd::merge_topk, whose order
// is the single process's (ascending distance, ties by the smaller document).
#include <cstddef>
#include <string_view>

#include "app/cluster.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

enum class Layout {
  documents,  // the larger set spread: every rank searches all queries in its documents
  queries,    // every rank searches its queries in all documents (many queries)
};
Layout parse_layout(std::string_view s);  // "docs" | "queries"

// Where a distributed search spent its time, on rank 0.
struct ExchangeTimes {
  double local = 0;     // this rank's own search
  double waiting = 0;   // for the slowest rank to finish its part
  double exchange = 0;  // gathering the parts and merging them
};

// The options of this rank: with a GPU backend, the device of its local rank.
SearchOptions for_rank(const Cluster& cluster, SearchOptions options);

// Top-k of every query against the whole index by all ranks; the results (and stats summed
// over ranks) on rank 0, empty elsewhere. Ranks with a GPU take the device of their local rank.
SearchResults distributed_search(Cluster& cluster, const Index& index, const QuerySet& queries,
                                 std::size_t k, SearchOptions options, Layout layout,
                                 SearchStats* stats = nullptr, ExchangeTimes* times = nullptr);

}  // namespace lcrwmd::app
