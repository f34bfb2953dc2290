#pragma once
// search and pairwise under mpirun with a shard per rank (--index once per rank): each rank maps
// only its own file (lcrwmd::RankShards); and how search writes its results, shared by both ways.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/query_input.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

// The id and (with_text) the text of the neighbour at results position p, document doc.
using Describe = std::function<std::string(std::size_t p, std::size_t doc)>;

// Top-k as TSV query_id, rank, doc_id, distance [, text]; to stdout, or atomically to `file`.
void write_results(const SearchResults& r, const std::vector<std::string>& query_ids,
                   const Describe& id_of, const Describe& text_of, bool with_text,
                   std::unique_ptr<AtomicFile> file);

void search_rank_shards(const QueryFlags& f, std::size_t k, bool with_text,
                        std::unique_ptr<AtomicFile> file);
void pairwise_rank_shards(const QueryFlags& f, const std::string& output,
                          const std::string& row_ids);

}  // namespace lcrwmd::app
