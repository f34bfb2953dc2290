// Building blocks of the CUDA backend timed alone, for lcrwmd_bench gpu: the phase-1 GEMM, and
// phase 2 by our kernel beside cuSPARSE's SpMM (the issue leaves the choice to measurement).
#include "cuda/bench_timers.h"

#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/gemm.h"
#include "cuda/kernels.h"
#include "lcrwmd/error.h"

#define LCRWMD_CUSPARSE_CHECK(call)                                                               \
  do {                                                                                            \
    const cusparseStatus_t lcrwmd_s_ = (call);                                                    \
    if (lcrwmd_s_ != CUSPARSE_STATUS_SUCCESS)                                                     \
      throw ::lcrwmd::Error(std::string("cuSPARSE error: ") + cusparseGetErrorString(lcrwmd_s_) + \
                            " (" #call ")");                                                      \
  } while (0)

namespace lcrwmd::cuda {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Median GPU seconds of run() over reps calls after one warm-up.
template <typename Run>
double time_on(cudaStream_t s, std::size_t reps, Run&& run) {
  Event start(true), stop(true);
  std::vector<double> times;
  for (std::size_t r = 0; r <= reps; ++r) {
    start.record(s);
    run();
    stop.record(s);
    stop.sync();
    if (r > 0) times.push_back(Event::seconds_between(start, stop));
  }
  return median(times);
}

}  // namespace

double time_phase1_gemm(int device, std::size_t rows, std::size_t cols, std::size_t dim, bool tf32,
                        std::size_t reps) {
  LCRWMD_CUDA_CHECK(cudaSetDevice(device));
  const Stream stream;
  const Cublas blas(stream.get());
  LCRWMD_CUBLAS_CHECK(
      cublasSetMathMode(blas.get(), tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  std::vector<float> host(std::max(rows, cols) * dim);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (float& x : host) x = normal(rng);
  DeviceArray<float> a, b, c;
  a.upload(host.data(), rows * dim, stream.get());
  b.upload(host.data(), cols * dim, stream.get());
  c.reserve(rows * cols);
  Event start(true), stop(true);
  std::vector<double> times;
  for (std::size_t r = 0; r <= reps; ++r) {
    start.record(stream.get());
    gemm_neg2(blas.get(), a.data(), rows, b.data(), cols, dim, c.data(), cols);
    stop.record(stream.get());
    stop.sync();
    if (r > 0) times.push_back(Event::seconds_between(start, stop));  // r = 0: warm-up
  }
  std::sort(times.begin(), times.end());
  return times.empty() ? 0.0 : times[times.size() / 2];
}

Phase2Times time_phase2(int device, const Index& index, std::size_t queries, std::size_t reps) {
  LCRWMD_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t n = index.n_docs(), v = index.vocab_size(), nnz = index.nnz();
  const int nq = to_int(queries, "queries");
  to_int(nnz, "nonzeros (cuSPARSE's 32-bit offsets)");
  const Stream stream;
  const cudaStream_t s = stream.get();
  // cuSPARSE wants offsets and indices of one type: 32-bit offsets for both kernels.
  std::vector<std::int32_t> offsets32(n + 1);
  for (std::size_t i = 0; i <= n; ++i) offsets32[i] = static_cast<std::int32_t>(index.indptr()[i]);
  std::vector<float> z(v * queries);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(0.5f, 4.0f);
  for (float& x : z) x = u(rng);
  DeviceArray<std::uint64_t> indptr;
  DeviceArray<std::int32_t> indptr32;
  DeviceArray<std::uint32_t> indices;
  DeviceArray<float> values, dz, own, theirs;
  indptr.upload(index.indptr().data(), n + 1, s);
  indptr32.upload(offsets32.data(), n + 1, s);
  indices.upload(index.indices().data(), nnz, s);
  values.upload(index.values().data(), nnz, s);
  dz.upload(z.data(), z.size(), s);
  own.reserve(n * queries);
  theirs.reserve(n * queries);
  const DeviceCsr csr{indptr.data(), indices.data(), values.data(), n, nnz};

  Phase2Times t;
  t.own = time_on(s, reps,
                  [&] { sparse_times_z(csr, dz.data(), nq, false, nullptr, own.data(), n, s); });

  cusparseHandle_t h = nullptr;
  LCRWMD_CUSPARSE_CHECK(cusparseCreate(&h));
  struct Release {
    cusparseHandle_t h;
    cusparseSpMatDescr_t a = nullptr;
    cusparseDnMatDescr_t b = nullptr, c = nullptr;
    ~Release() {
      cusparseDestroyDnMat(c);
      cusparseDestroyDnMat(b);
      cusparseDestroySpMat(a);
      cusparseDestroy(h);
    }
  } r{h};
  LCRWMD_CUSPARSE_CHECK(cusparseSetStream(h, s));
  LCRWMD_CUSPARSE_CHECK(cusparseCreateCsr(
      &r.a, static_cast<std::int64_t>(n), static_cast<std::int64_t>(v),
      static_cast<std::int64_t>(nnz), indptr32.data(), indices.data(), values.data(),
      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  // Z is row-major v x nq (our layout); the result row-major n x nq.
  LCRWMD_CUSPARSE_CHECK(cusparseCreateDnMat(&r.b, static_cast<std::int64_t>(v), nq, nq, dz.data(),
                                            CUDA_R_32F, CUSPARSE_ORDER_ROW));
  LCRWMD_CUSPARSE_CHECK(cusparseCreateDnMat(&r.c, static_cast<std::int64_t>(n), nq, nq,
                                            theirs.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  const float one = 1.0f, zero = 0.0f;
  std::size_t bytes = 0;
  LCRWMD_CUSPARSE_CHECK(cusparseSpMM_bufferSize(
      h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, r.a, r.b, &zero,
      r.c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  DeviceArray<unsigned char> buffer(std::max<std::size_t>(bytes, 1));
  t.cusparse = time_on(s, reps, [&] {
    LCRWMD_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       CUSPARSE_OPERATION_NON_TRANSPOSE, &one, r.a, r.b, &zero, r.c,
                                       CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer.data()));
  });

  std::vector<float> a(n * queries), b(n * queries);
  LCRWMD_CUDA_CHECK(
      cudaMemcpy(a.data(), own.data(), a.size() * sizeof(float), cudaMemcpyDeviceToHost));
  LCRWMD_CUDA_CHECK(
      cudaMemcpy(b.data(), theirs.data(), b.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < queries; ++j) {
      const double x = a[j * n + i], y = b[i * queries + j];
      t.max_rel_diff = std::max(t.max_rel_diff, std::fabs(x - y) / std::max(1e-30, std::fabs(y)));
    }
  return t;
}

}  // namespace lcrwmd::cuda
