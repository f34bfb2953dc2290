#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/check.h"
#include "cuda/select_k.h"
#include "cuda/sort_key.h"

namespace lcrwmd::cuda {
namespace {

constexpr int kSampleThreads = 256, kSampleItems = 8;
constexpr std::size_t kSample = kSampleThreads * kSampleItems;  // 2048
constexpr unsigned kMaxGridY = 65535;

// Block per row: the k-th smallest of an even sample of the row (all of it when n <= 2048).
__global__ void threshold_kernel(const float* dist, std::size_t n, std::size_t stride,
                                 std::size_t k, float* thresholds) {
  using Sort = cub::BlockRadixSort<float, kSampleThreads, kSampleItems>;
  __shared__ typename Sort::TempStorage temp;
  const float* row = dist + blockIdx.x * stride;
  const std::size_t s = n < kSample ? n : kSample;
  float keys[kSampleItems];
  for (int i = 0; i < kSampleItems; ++i) {
    const std::size_t t = threadIdx.x * kSampleItems + i;
    keys[i] = t < s ? row[n <= kSample ? t : t * n / kSample] : INFINITY;
  }
  Sort(temp).Sort(keys);  // blocked: thread t holds ranks t * 8 .. t * 8 + 7
  const std::size_t rank = k - 1;
  if (rank >= s) {
    if (threadIdx.x == 0) thresholds[blockIdx.x] = INFINITY;
  } else if (threadIdx.x == rank / kSampleItems) {
    thresholds[blockIdx.x] = keys[rank % kSampleItems];
  }
}

__global__ void collect_kernel(const float* dist, std::size_t n, std::size_t stride,
                               const float* thresholds, unsigned* counts, std::uint64_t* out,
                               std::size_t cap) {
  const std::size_t row = blockIdx.y;
  const float t = thresholds[row];
  const float* d = dist + row * stride;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float x = d[i];
    if (x <= t) {
      const unsigned pos = atomicAdd(&counts[row], 1u);
      if (pos < cap) out[row * cap + pos] = sort_key(x, static_cast<std::uint32_t>(i));
    }
  }
}

__global__ void keys_kernel(const float* d, std::size_t n, std::uint64_t* out) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = sort_key(d[i], static_cast<std::uint32_t>(i));
}

struct KeyBetween {
  const float* d;
  std::uint64_t lo, hi;
  __device__ bool operator()(std::uint32_t i) const {
    const std::uint64_t key = sort_key(d[i], i);
    return lo < key && key < hi;
  }
};

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
}

}  // namespace

void TopKSelector::select(const float* dist, std::size_t n_rows, std::size_t n, std::size_t stride,
                          std::size_t k, std::vector<std::uint64_t>& out, cudaStream_t s) {
  const std::size_t kk = std::min(k, n);
  out.assign(n_rows * kk, 0);
  if (kk == 0 || n_rows == 0) return;
  const std::size_t cap = select_capacity(n, kk);
  const std::size_t group = std::min<std::size_t>(n_rows, kMaxGridY);  // the grid's y limit
  thresholds_.reserve(group);
  counts_.reserve(group);
  candidates_.reserve(group * cap);
  sorted_.reserve(group * cap);
  offsets_.reserve(2 * group);
  std::vector<std::int64_t> offsets(2 * group);
  for (std::size_t r0 = 0; r0 < n_rows; r0 += group) {
    const std::size_t rows = std::min(group, n_rows - r0);
    const float* block = dist + r0 * stride;
    threshold_kernel<<<static_cast<unsigned>(rows), kSampleThreads, 0, s>>>(block, n, stride, kk,
                                                                            thresholds_.data());
    LCRWMD_LAUNCH_CHECK();
    LCRWMD_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, rows * sizeof(unsigned), s));
    collect_kernel<<<dim3(grid_for(n), static_cast<unsigned>(rows)), 256, 0, s>>>(
        block, n, stride, thresholds_.data(), counts_.data(), candidates_.data(), cap);
    LCRWMD_LAUNCH_CHECK();
    host_counts_.resize(rows);
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), counts_.data(), rows * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    // Overflowing rows get an empty segment here and a whole-row sort below.
    for (std::size_t r = 0; r < rows; ++r) {
      offsets[r] = static_cast<std::int64_t>(r * cap);
      offsets[group + r] = offsets[r] + (host_counts_[r] <= cap ? host_counts_[r] : 0);
    }
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(offsets_.data(), offsets.data(),
                                      2 * group * sizeof(std::int64_t), cudaMemcpyHostToDevice, s));
    std::size_t temp_bytes = 0;
    LCRWMD_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
        nullptr, temp_bytes, candidates_.data(), sorted_.data(),
        static_cast<std::int64_t>(rows * cap), static_cast<std::int64_t>(rows), offsets_.data(),
        offsets_.data() + group, s));
    temp_.reserve(temp_bytes);
    LCRWMD_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
        temp_.data(), temp_bytes, candidates_.data(), sorted_.data(),
        static_cast<std::int64_t>(rows * cap), static_cast<std::int64_t>(rows), offsets_.data(),
        offsets_.data() + group, s));
    LCRWMD_CUDA_CHECK(cudaMemcpy2DAsync(
        out.data() + r0 * kk, kk * sizeof(std::uint64_t), sorted_.data(),
        cap * sizeof(std::uint64_t), kk * sizeof(std::uint64_t), rows, cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    for (std::size_t r = 0; r < rows; ++r)
      if (host_counts_[r] > cap)
        sort_whole_row(block + r * stride, n, kk, out.data() + (r0 + r) * kk, s);
  }
}

void TopKSelector::sort_whole_row(const float* row, std::size_t n, std::size_t k,
                                  std::uint64_t* out, cudaStream_t s) {
  DeviceArray<std::uint64_t> keys(n), sorted(n);
  keys_kernel<<<grid_for(n), 256, 0, s>>>(row, n, keys.data());
  LCRWMD_LAUNCH_CHECK();
  std::size_t temp_bytes = 0;
  LCRWMD_CUDA_CHECK(
      cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys.data(), sorted.data(), n, 0, 64, s));
  temp_.reserve(temp_bytes);
  LCRWMD_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.data(), temp_bytes, keys.data(),
                                                   sorted.data(), n, 0, 64, s));
  LCRWMD_CUDA_CHECK(
      cudaMemcpyAsync(out, sorted.data(), k * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, s));
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::size_t TopKSelector::collect_between(const float* distances, std::size_t n, std::uint64_t lo,
                                          std::uint64_t hi, std::uint32_t* list, cudaStream_t s) {
  if (n == 0) return 0;
  counts_.reserve(1);
  const thrust::counting_iterator<std::uint32_t> docs(0);
  const KeyBetween pred{distances, lo, hi};
  std::size_t temp_bytes = 0;
  LCRWMD_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, docs, list, counts_.data(),
                                          static_cast<std::int64_t>(n), pred, s));
  temp_.reserve(temp_bytes);
  LCRWMD_CUDA_CHECK(cub::DeviceSelect::If(temp_.data(), temp_bytes, docs, list, counts_.data(),
                                          static_cast<std::int64_t>(n), pred, s));
  unsigned count = 0;
  LCRWMD_CUDA_CHECK(
      cudaMemcpyAsync(&count, counts_.data(), sizeof count, cudaMemcpyDeviceToHost, s));
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
  return count;
}

}  // namespace lcrwmd::cuda
