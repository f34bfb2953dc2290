#pragma once
// What the CUDA backend is measured against, built from NVIDIA's libraries alone: the bare
// cuBLAS SGEMM of phase 1, and cuSPARSE's SpMM for phase 2. Builds without CUDA throw.
// (Our own kernels' times come from Nsight Compute in bench/gpu.sh, not from inside the library.)
#include <cstddef>

#include "lcrwmd/index.h"

namespace lcrwmd::bench {

// Median seconds of `reps` SGEMMs (after one warm-up) of (rows x dim) times (dim x cols) on
// `device`, on random data; tf32: on TF32 tensor cores.
double time_cublas_sgemm(int device, std::size_t rows, std::size_t cols, std::size_t dim, bool tf32,
                         std::size_t reps);

// Median seconds of cuSPARSE's SpMM of the index's CSR times a random dense v x `queries` Z:
// phase 2 of LC-RWMD by NVIDIA's library.
double time_cusparse_spmm(int device, const Index& index, std::size_t queries, std::size_t reps);

}  // namespace lcrwmd::bench
