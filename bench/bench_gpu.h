#pragma once
// lcrwmd_bench gpu: the CUDA backend's figures (BENCHMARKS.md), LC-RWMD's phase 1 in the
// device's certified precision (bf16 on tensor cores where it has them) beside f32.
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
