#pragma once
// Query sets and search results as bytes, for the ranks of a distributed command.
#include <string>

#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

std::string pack(const QuerySet& q);
QuerySet unpack_queries(const std::string& bytes);

std::string pack(const SearchResults& r, const SearchStats& st);
void unpack_results(const std::string& bytes, SearchResults& r, SearchStats& st);

}  // namespace lcrwmd::app
