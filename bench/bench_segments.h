#pragma once
// lcrwmd_bench segments: what a collection grown by adds costs its searches. The index's
// documents laid out as the segments a collection is left with when its newest documents were
// added one at a time under the merge policy (each segment with its own vocabulary), searched
// beside the one index of them, one query at a time and in a batch, times paired.
#include <cstddef>
#include <vector>

#include "bench_util.h"
#include "lcrwmd/query.h"
#include "lcrwmd/searcher.h"

namespace lcrwmd::bench {

struct SegmentsRun {
  // The newest documents, each added alone (the others: the collection they were added to).
  std::size_t adds = 1000;
  std::size_t single = 8;  // queries timed one at a time
  std::size_t batch = 64;  // queries timed as one batch (0: none)
  std::size_t reps = 3;
};

void segment_benchmarks(const Index& whole, const QuerySet& qs, const SearcherOptions& so,
                        const SegmentsRun& run, Report& rep);

}  // namespace lcrwmd::bench
