#pragma once
// lcrwmd_bench precision: CPU phase 1 in f32, bf16 and int8 side by side (single queries
// against the bare SGEMM of their phase 1 and against their floor (phase_floor.h), batches, and
// a bulk search with the defaults against f32 in batches of 64), every precision's results the
// same.
#include <cstddef>
#include <vector>

#include "bench_util.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::bench {

struct PrecisionRun {
  std::size_t reps = 7;
  bool single = true;
  std::vector<std::size_t> batches;
  std::size_t bulk = 0;  // 0: no bulk comparison
};

void precision_benchmarks(const Index& ix, const QuerySet& qs, const PrecisionRun& run,
                          Report& rep);

}  // namespace lcrwmd::bench
