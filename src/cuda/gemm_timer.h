#pragma once
// For benchmarks: the time of the bare cuBLAS SGEMM of a phase-1 shape, to set the CUDA
// backend's LC-RWMD beside. CUDA-free declaration; builds without CUDA throw lcrwmd::Error.
#include <cstddef>

namespace lcrwmd::cuda {

// Median seconds of `reps` SGEMMs (after one warm-up) of (rows x dim) times (dim x cols) on
// `device`, on random data; tf32: on TF32 tensor cores.
double time_phase1_gemm(int device, std::size_t rows, std::size_t cols, std::size_t dim, bool tf32,
                        std::size_t reps);

}  // namespace lcrwmd::cuda
