// Devices and failures: the device listing and check, and every CUDA or cuBLAS error as an
// lcrwmd::Error that names the call.
#include "cuda/devices.h"

#include <cuda_runtime_api.h>

#include <climits>
#include <string>

#include "cuda/check.h"
#include "cuda/gemm.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd {

namespace cuda {

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a sticky-free error so later calls are not blamed for it
  std::string msg = std::string("CUDA error: ") + cudaGetErrorString(e) + " (" + call + " at " +
                    file + ":" + std::to_string(line) + ")";
  if (e == cudaErrorMemoryAllocation)
    throw DeviceOutOfMemory(
        msg + "; out of GPU memory: lower --device-memory, --batch or --device-chunk");
  throw Error(msg);
}

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  std::string msg = std::string("cuBLAS error: ") + cublasGetStatusString(s) + " (" + call +
                    " at " + file + ":" + std::to_string(line) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw DeviceOutOfMemory(msg + "; out of GPU memory");
  throw Error(msg);
}

int to_int(std::size_t x, const char* what) {
  if (x > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string("too many ") + what + " for one GPU call: " + std::to_string(x));
  return static_cast<int>(x);
}

GpuDevice checked_device(int id) {
  const std::size_t count = gpu_device_count();
  if (id < 0 || static_cast<std::size_t>(id) >= count)
    throw Error(count == 0 ? std::string("no CUDA device found (--backend cuda needs an NVIDIA "
                                         "GPU and its driver; --backend cpu runs without one)")
                           : "no CUDA device " + std::to_string(id) + " (found " +
                                 std::to_string(count) + ")");
  return gpu_device(id);
}

}  // namespace cuda

bool built_with_cuda() { return true; }

std::size_t gpu_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error, an answer
    return 0;
  }
  return static_cast<std::size_t>(n);
}

GpuDevice gpu_device(int id) {
  cudaDeviceProp p{};
  LCRWMD_CUDA_CHECK(cudaGetDeviceProperties(&p, id));
  GpuDevice g;
  g.id = id;
  g.name = p.name;
  g.compute_major = p.major;
  g.compute_minor = p.minor;
  g.total_bytes = p.totalGlobalMem;
  int current = 0;
  std::size_t free = 0, total = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(id) == cudaSuccess &&
      cudaMemGetInfo(&free, &total) == cudaSuccess)
    g.free_bytes = free;
  cudaSetDevice(current);
  cudaGetLastError();
  return g;
}

std::vector<GpuDevice> gpu_devices() {
  std::vector<GpuDevice> out;
  for (std::size_t d = 0; d < gpu_device_count(); ++d)
    out.push_back(gpu_device(static_cast<int>(d)));
  return out;
}

}  // namespace lcrwmd
