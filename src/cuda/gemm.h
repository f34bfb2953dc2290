#pragma once
// The phase-1 GEMM, shared by the driver and the benchmark timers.
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

namespace lcrwmd::cuda {

// x as an int for a CUDA argument; lcrwmd::Error where it does not fit.
int to_int(std::size_t x, const char* what);

// tile (rows x cols, row-major, row stride ld >= cols) = -2 * row_vectors . col_vectors^T.
// cuBLAS's 64-bit interface: a tile may hold more than 2^31 elements (a 3M-word vocabulary).
void gemm_neg2(cublasHandle_t h, const float* row_vectors, std::size_t rows,
               const float* col_vectors, std::size_t cols, std::size_t dim, float* tile,
               std::size_t ld);
// The same from bf16 copies (rows of `stride` elements, word_terms.h) on tensor cores: the
// products exact in float, summed in float.
void gemm_neg2_bf16(cublasHandle_t h, const std::uint16_t* row_vectors, std::size_t rows,
                    const std::uint16_t* col_vectors, std::size_t cols, std::size_t dim,
                    std::size_t stride, float* tile, std::size_t ld);

}  // namespace lcrwmd::cuda
