#include "cuda/gemm.h"

#include <cstdint>

#include "cuda/check.h"

namespace lcrwmd::cuda {

// In cuBLAS's column-major view the tile is C (cols x rows, ld) = A^T B with A the column
// vectors (dim x cols) and B the row vectors (dim x rows).
void gemm_neg2(cublasHandle_t h, const float* row_vectors, std::size_t rows,
               const float* col_vectors, std::size_t cols, std::size_t dim, float* tile,
               std::size_t ld) {
  const float alpha = -2.0f, beta = 0.0f;
  const auto i64 = [](std::size_t x) { return static_cast<std::int64_t>(x); };
  LCRWMD_CUBLAS_CHECK(cublasSgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, i64(cols), i64(rows), i64(dim),
                                     &alpha, col_vectors, i64(dim), row_vectors, i64(dim), &beta,
                                     tile, i64(ld)));
}

void gemm_neg2_bf16(cublasHandle_t h, const std::uint16_t* row_vectors, std::size_t rows,
                    const std::uint16_t* col_vectors, std::size_t cols, std::size_t dim,
                    std::size_t stride, float* tile, std::size_t ld) {
  const float alpha = -2.0f, beta = 0.0f;
  const auto i64 = [](std::size_t x) { return static_cast<std::int64_t>(x); };
  LCRWMD_CUBLAS_CHECK(cublasGemmEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, i64(cols), i64(rows), i64(dim),
                                      &alpha, col_vectors, CUDA_R_16BF, i64(stride), row_vectors,
                                      CUDA_R_16BF, i64(stride), &beta, tile, CUDA_R_32F, i64(ld),
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace lcrwmd::cuda
