#pragma once
// lcrwmd_bench gpu: the CUDA backend's figures (BENCHMARKS.md, issue 4).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"

namespace lcrwmd::bench {

void gpu_benchmarks(const Index& ix, const QuerySet& qs, int device, std::size_t reps,
                    const std::vector<std::size_t>& batches, Report& rep,
                    std::map<std::string, std::string>& meta);

}  // namespace lcrwmd::bench
