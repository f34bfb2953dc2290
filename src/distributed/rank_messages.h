#pragma once
// What the searchers over ranks (RankShards, RankQueries) send to rank 0, and how rank 0 reads
// it: each message carries its rank's error (empty: none) before its part, and a damaged or
// failed part is an Error naming the first rank concerned.
#include <cstddef>
#include <string>
#include <vector>

#include "lcrwmd/communicator.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "methods/method_impl.h"

namespace lcrwmd::rank_messages {

// A rank's top-k (or its error).
std::string results(const std::string& error, const SearchResults& r, const SearchStats& st);
// Every rank's top-k, in rank order, their work counts added to `total`.
std::vector<SearchResults> read_results(const std::vector<std::string>& parts, SearchStats& total);

// Rows [begin, end) of `queries` against `searcher`'s documents (width of them), as a message,
// their work counts added to `stats`; a failure travels as the message's error.
std::string rows(const Searcher& searcher, const QuerySet& queries, std::size_t begin,
                 std::size_t end, std::size_t width, const SearchOptions& options,
                 SearchStats& stats);
// Every rank's rows, in rank order.
std::vector<std::vector<float>> read_rows(const std::vector<std::string>& parts);

// A rank's evidence (methods/method_impl.h), or its error; every rank's, in rank order.
std::string evidence(const std::string& error, const Evidence& e);
std::vector<Evidence> read_evidence(const std::vector<std::string>& parts);

// Every rank's work counts summed, on rank 0 (a collective step; `total` may be null).
void sum_stats(Communicator& comm, const SearchStats& mine, SearchStats* total);

}  // namespace lcrwmd::rank_messages
