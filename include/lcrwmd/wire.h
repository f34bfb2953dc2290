#pragma once
// Query sets and search results as bytes, for the ranks of a distributed job (lcrwmd/segments.h,
// the command line under mpirun). A damaged or truncated message is an Error, never a huge
// allocation.
#include <string>

#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

std::string pack(const QuerySet& q);
QuerySet unpack_queries(const std::string& bytes);

std::string pack(const SearchResults& r, const SearchStats& st);
void unpack_results(const std::string& bytes, SearchResults& r, SearchStats& st);

}  // namespace lcrwmd
