// The CUDA backend's baselines (cuda_baselines.h), with no code of the library's own.
#include "cuda_baselines.h"

#include "bench_util.h"
#include "lcrwmd/error.h"

#if LCRWMD_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace lcrwmd::bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw Error(std::string(what) + ": " + cusparseGetErrorString(s));
}

// Device memory for one measurement.
template <typename T>
class Buffer {
 public:
  explicit Buffer(std::size_t n) {
    check(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)),
          "cudaMalloc");
  }
  Buffer(const T* host, std::size_t n) : Buffer(n) {
    check(cudaMemcpy(p_, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { cudaFree(p_); }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Median GPU seconds of run() over `reps` calls after one warm-up, timed by events on stream 0.
template <typename Run>
double median_seconds(std::size_t reps, Run&& run) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> times;
  for (std::size_t r = 0; r <= reps; ++r) {
    check(cudaEventRecord(start, nullptr), "cudaEventRecord");
    run();
    check(cudaEventRecord(stop, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (r > 0) times.push_back(1e-3 * ms);  // r = 0: warm-up
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(times);
}

}  // namespace

double time_cublas_sgemm(int device, std::size_t rows, std::size_t cols, std::size_t dim, bool tf32,
                         std::size_t reps) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::vector<float> host = random_floats(std::max(rows, cols) * dim, 1, -1, 1);
  const Buffer<float> a(host.data(), rows * dim), b(host.data(), cols * dim);
  const Buffer<float> c(rows * cols);
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  struct Release {
    cublasHandle_t h;
    ~Release() { cublasDestroy(h); }
  } release{h};
  check(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
        "cublasSetMathMode");
  const float alpha = -2.0f, beta = 0.0f;
  // Row-major C (rows x cols) = -2 A B^T, as the backend's phase 1 computes it.
  return median_seconds(reps, [&] {
    check(cublasSgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<std::int64_t>(cols),
                         static_cast<std::int64_t>(rows), static_cast<std::int64_t>(dim), &alpha,
                         b.get(), static_cast<std::int64_t>(dim), a.get(),
                         static_cast<std::int64_t>(dim), &beta, c.get(),
                         static_cast<std::int64_t>(cols)),
          "cublasSgemm_64");
  });
}

double time_cusparse_spmm(int device, const Index& index, std::size_t queries, std::size_t reps) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::size_t n = index.n_docs(), v = index.vocab_size(), nnz = index.nnz();
  if (nnz > 0x7fffffffu) throw Error("cuSPARSE SpMM baseline: more than 2^31 nonzeros");
  // cuSPARSE wants offsets and indices of one type: 32-bit.
  std::vector<std::int32_t> offsets(n + 1);
  for (std::size_t i = 0; i <= n; ++i) offsets[i] = static_cast<std::int32_t>(index.indptr()[i]);
  const std::vector<float> z = random_floats(v * queries, 2, 0.5f, 4.0f);
  const Buffer<std::int32_t> d_offsets(offsets.data(), n + 1);
  const Buffer<std::uint32_t> d_indices(index.indices().data(), nnz);
  const Buffer<float> d_values(index.values().data(), nnz), d_z(z.data(), z.size());
  const Buffer<float> d_out(n * queries);
  const auto nq = static_cast<std::int64_t>(queries);
  struct Handles {
    cusparseHandle_t h = nullptr;
    cusparseSpMatDescr_t a = nullptr;
    cusparseDnMatDescr_t b = nullptr, c = nullptr;
    ~Handles() {
      cusparseDestroyDnMat(c);
      cusparseDestroyDnMat(b);
      cusparseDestroySpMat(a);
      cusparseDestroy(h);
    }
  } r;
  check(cusparseCreate(&r.h), "cusparseCreate");
  check(cusparseCreateCsr(&r.a, static_cast<std::int64_t>(n), static_cast<std::int64_t>(v),
                          static_cast<std::int64_t>(nnz), d_offsets.get(), d_indices.get(),
                          d_values.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
        "cusparseCreateCsr");
  // Z row-major v x nq (the backend's layout); the result row-major n x nq.
  check(cusparseCreateDnMat(&r.b, static_cast<std::int64_t>(v), nq, nq, d_z.get(), CUDA_R_32F,
                            CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat");
  check(cusparseCreateDnMat(&r.c, static_cast<std::int64_t>(n), nq, nq, d_out.get(), CUDA_R_32F,
                            CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat");
  const float one = 1.0f, zero = 0.0f;
  std::size_t bytes = 0;
  check(cusparseSpMM_bufferSize(r.h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &one, r.a, r.b, &zero, r.c,
                                CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
        "cusparseSpMM_bufferSize");
  const Buffer<unsigned char> buffer(bytes);
  return median_seconds(reps, [&] {
    check(
        cusparseSpMM(r.h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                     r.a, r.b, &zero, r.c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer.get()),
        "cusparseSpMM");
  });
}

}  // namespace lcrwmd::bench

#else

namespace lcrwmd::bench {

double time_cublas_sgemm(int, std::size_t, std::size_t, std::size_t, bool, std::size_t) {
  throw Error("lcrwmd_bench was built without CUDA");
}
double time_cusparse_spmm(int, const Index&, std::size_t, std::size_t) {
  throw Error("lcrwmd_bench was built without CUDA");
}

}  // namespace lcrwmd::bench

#endif
