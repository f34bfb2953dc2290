#pragma once
// Owning handles for device memory, pinned host memory, streams, events and cuBLAS: released
// in destructors (whose errors are ignored: they run while another error may be unwinding).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/check.h"

namespace lcrwmd::cuda {

// Device array that grows on demand and keeps its capacity (scratch reused across batches).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) { reserve(n); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  ~DeviceArray() { cudaFree(data_); }

  // Room for n elements; the contents are lost when it has to grow.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    cudaFree(std::exchange(data_, nullptr));
    capacity_ = 0;
    void* p = nullptr;
    LCRWMD_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  void upload(const T* src, std::size_t n, cudaStream_t s) {
    reserve(n);
    if (n) LCRWMD_CUDA_CHECK(cudaMemcpyAsync(data_, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  // Gives the memory back (scratch sized for another batch's shape).
  void release() {
    cudaFree(std::exchange(data_, nullptr));
    capacity_ = 0;
  }
  T* data() const { return data_; }
  std::size_t bytes() const { return capacity_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// Page-locked host array: the copies into it run asynchronously, beside the kernels.
template <typename T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() { cudaFreeHost(data_); }
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    cudaFreeHost(std::exchange(data_, nullptr));
    capacity_ = 0;
    void* p = nullptr;
    LCRWMD_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class Stream {
 public:
  Stream() { LCRWMD_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }
  void sync() const { LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(bool timing = false) {
    LCRWMD_CUDA_CHECK(
        cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  static double seconds_between(const Event& a, const Event& b) {
    float ms = 0;
    LCRWMD_CUDA_CHECK(cudaEventElapsedTime(&ms, a.e_, b.e_));
    return 1e-3 * ms;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(e_); }
  void record(cudaStream_t s) { LCRWMD_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void wait_on(cudaStream_t s) const { LCRWMD_CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }
  void sync() const { LCRWMD_CUDA_CHECK(cudaEventSynchronize(e_)); }

 private:
  cudaEvent_t e_ = nullptr;
};

class Cublas {
 public:
  explicit Cublas(cudaStream_t s) {
    LCRWMD_CUBLAS_CHECK(cublasCreate(&h_));
    LCRWMD_CUBLAS_CHECK(cublasSetStream(h_, s));
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  ~Cublas() { cublasDestroy(h_); }
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace lcrwmd::cuda
