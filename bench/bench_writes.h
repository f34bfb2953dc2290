#pragma once
// lcrwmd_bench writes: what a change of a living collection costs, in one process as the
// service holds it (a writer with the embeddings in memory, a reader refreshed after each
// commit): one document added, then the refresh that makes it searchable; a document found by
// id; one deleted, and its refresh; many added at once. Run on collections of growing size (bench/
// serve_scale.py builds them), the figures say whether a write costs what it changes.
#include <cstddef>
#include <string>

#include "bench_util.h"

namespace lcrwmd::bench {

struct WritesRun {
  std::string collection;    // a collection directory (changed by the run)
  std::string docs;          // TSV of documents to add, ids new to the collection
  std::size_t single = 30;   // single-document adds and deletes timed
  std::size_t bulk = 10000;  // documents of the one large add (0: none)
};

void write_benchmarks(const WritesRun& run, Report& rep);

}  // namespace lcrwmd::bench
