#pragma once
// The top-k of a command's queries, wherever they run: one index or a collection of shards in
// one process, or one index over mpirun's ranks (--distribute); results on rank 0, with the
// search's notes on stderr. search and classify share it.
#include <cstddef>

#include "app/query_input.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

SearchResults top_k(const QueryFlags& f, const Loaded& l, std::size_t k, SearchStats& stats);

}  // namespace lcrwmd::app
