#pragma once
// Every CUDA runtime and cuBLAS call is checked; a failure becomes lcrwmd::Error naming the
// call, where it was made, and for a failed allocation what to lower.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "lcrwmd/error.h"

namespace lcrwmd::cuda {

// A device allocation (ours or cuBLAS's) failed: the driver may free its scratch and retry.
class DeviceOutOfMemory : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file,
                                     int line);

}  // namespace lcrwmd::cuda

#define LCRWMD_CUDA_CHECK(call)                                               \
  do {                                                                        \
    const cudaError_t lcrwmd_e_ = (call);                                     \
    if (lcrwmd_e_ != cudaSuccess)                                             \
      ::lcrwmd::cuda::throw_cuda_error(lcrwmd_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define LCRWMD_CUBLAS_CHECK(call)                                               \
  do {                                                                          \
    const cublasStatus_t lcrwmd_s_ = (call);                                    \
    if (lcrwmd_s_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::lcrwmd::cuda::throw_cublas_error(lcrwmd_s_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad configuration is reported at once, not at the next sync.
#define LCRWMD_LAUNCH_CHECK() LCRWMD_CUDA_CHECK(cudaGetLastError())
