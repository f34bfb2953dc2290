#pragma once
// The device a GpuIndex runs on: checked once, and made current for each call.
#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd::cuda {

// Device `id`, or an error that says why there is none; checked before any stream or handle is
// made, so that a machine without a GPU hears so.
GpuDevice checked_device(int id);

// The index's device is current for a call; the caller's is restored after it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int id) {
    LCRWMD_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != id) LCRWMD_CUDA_CHECK(cudaSetDevice(id));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace lcrwmd::cuda
