#pragma once
// lcrwmd_bench directions: what a search box's query costs. Each query cut to its first few
// words (a typed query), searched query-to-document beside one-sided (document-to-query) and
// symmetric LC-RWMD, and by bm25 and hybrid, one at a time and in batches, times paired query
// by query.
#include <cstddef>
#include <string>
#include <vector>

#include "bench_util.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::bench {

// `words` distinct words of each query, spread evenly over its words (ascending ids: from its
// commonest to its rarest in a synthetic index), uniformly weighted, or by idf (their weights
// in qs, which has them by idf, scaled to sum to 1); each word also a term (once) for bm25,
// weighed by the index's statistics.
QuerySet short_queries(const Index& index, const QuerySet& qs, std::size_t words, bool idf);

// Queries as text (id, no label, their terms separated by spaces) in a TSV at `path`: what a
// peer engine is given of short_queries' queries.
void write_query_text(const QuerySet& qs, const std::string& path);

// One query at a time, `reps` of them (cycling through the queries) after `warm_up` untimed
// (the same queries, from the first).
void direction_benchmarks(const Searcher& searcher, const QuerySet& short_qs, std::size_t reps,
                          std::size_t warm_up, const std::vector<std::size_t>& batches,
                          Report& rep);

}  // namespace lcrwmd::bench
