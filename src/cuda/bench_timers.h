#pragma once
// For benchmarks: the CUDA backend's building blocks timed alone, to set the whole search
// beside. CUDA-free declarations; builds without CUDA throw lcrwmd::Error.
#include <cstddef>

#include "lcrwmd/index.h"

namespace lcrwmd::cuda {

// Median seconds of `reps` SGEMMs (after one warm-up) of (rows x dim) times (dim x cols) on
// `device`, on random data; tf32: on TF32 tensor cores.
double time_phase1_gemm(int device, std::size_t rows, std::size_t cols, std::size_t dim, bool tf32,
                        std::size_t reps);

// Phase 2 (D1 = X1 . Z for `queries` random columns of Z) by our kernel and by cuSPARSE's
// SpMM on the same data: median seconds of each, and their largest relative difference.
struct Phase2Times {
  double own = 0, cusparse = 0, max_rel_diff = 0;
};
Phase2Times time_phase2(int device, const Index& index, std::size_t queries, std::size_t reps);

}  // namespace lcrwmd::cuda
