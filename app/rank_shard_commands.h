#pragma once
// The commands' searchers under mpirun: with a part of the collection per rank (--index once per
// rank, or a collection's segments, each rank a run of them) each rank maps only its own files
// (lcrwmd::RankShards); with one index every rank maps it and takes a part of its documents or
// of the queries. And how search writes its results, shared by all.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/query_input.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

// The id and (with_text) the text of the neighbour at results position p, document doc.
using Describe = std::function<std::string(std::size_t p, std::size_t doc)>;

// Top-k as TSV query_id, rank, doc_id, distance [, text]; to stdout, or atomically to `file`.
// `method`'s ranking: a method that ranks by a score (MethodInfo::ranks_by_score) has its score
// in the fourth column (higher first), not minus it.
void write_results(const SearchResults& r, const std::vector<std::string>& query_ids,
                   const Describe& id_of, const Describe& text_of, bool with_text, Method method,
                   std::unique_ptr<AtomicFile> file);

// Under mpirun with one --index: the ranks' searcher, with `layout` "docs" each rank searching a
// contiguous part of the documents (RankShards over Index::shard), with "queries" a part of the
// queries against all of them (RankQueries); and the queries as it takes them (rank 0's).
struct IndexRanks {
  std::optional<Index> part;  // "docs": this rank's documents
  std::unique_ptr<Searcher> searcher;
  QuerySet queries;
};
std::unique_ptr<IndexRanks> spread_index(const Loaded& l, const SearcherOptions& options,
                                         const std::string& layout);

// Whether, under mpirun, each rank takes a part of the collection (search_rank_shards,
// pairwise_rank_shards): an --index per rank, or a collection that is not one index.
bool part_per_rank(const QueryFlags& f);
void search_rank_shards(const QueryFlags& f, std::size_t k, bool with_text,
                        std::unique_ptr<AtomicFile> file);
void pairwise_rank_shards(const QueryFlags& f, const std::string& output,
                          const std::string& row_ids);

}  // namespace lcrwmd::app
