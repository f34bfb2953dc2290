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

}  // namespace lcrwmd::cuda
