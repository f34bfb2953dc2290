#pragma once
// The phase-1 GEMM, shared by the driver and the benchmark timers.
#include <cublas_v2.h>

#include <cstddef>

namespace lcrwmd::cuda {

// x as an int for a CUDA or cuBLAS argument; lcrwmd::Error where it does not fit.
int to_int(std::size_t x, const char* what);

// tile (rows x cols, row-major) = -2 * row_vectors . col_vectors^T.
void gemm_neg2(cublasHandle_t h, const float* row_vectors, std::size_t rows,
               const float* col_vectors, int cols, int dim, float* tile);

}  // namespace lcrwmd::cuda
