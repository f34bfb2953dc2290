#pragma once
// Search spread over the ranks of a Cluster (mpirun), equal to one process's byte for byte:
// each rank takes a contiguous part of the documents (an Index::shard of the memory-mapped
// index) or of the queries, and rank 0 merges the parts with lcrwmd::merge_topk, whose order
// is the single process's (ascending distance, ties by the smaller document).
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "app/cluster.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"

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

// The searcher options of this rank: with a GPU backend, the device of its local rank.
SearcherOptions for_rank(const Cluster& cluster, SearcherOptions options);

// Top-k of every query against the whole index by all ranks. Each rank makes its searcher once
// (over its part of the documents, or all of them) and keeps it for every search.
class DistributedSearcher {
 public:
  DistributedSearcher(Cluster& cluster, const Index& index, const SearcherOptions& options,
                      Layout layout);
  // The results (and stats summed over ranks) on rank 0, empty elsewhere.
  SearchResults search(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                       SearchStats* stats = nullptr, ExchangeTimes* times = nullptr) const;
  const SearcherOptions& options() const { return options_; }

 private:
  Cluster& cluster_;
  const Index& index_;
  SearcherOptions options_;
  Layout layout_;
  std::optional<Index> shard_;          // Layout::documents: this rank's documents
  std::unique_ptr<Searcher> searcher_;  // null where this rank has no documents
};

}  // namespace lcrwmd::app
