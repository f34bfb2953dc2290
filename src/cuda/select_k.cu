#include <algorithm>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

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

// Rows whose candidates are few and k small: the k best by k block-wide minima, each the
// smallest key above the last (keys are distinct), written where the sort would put them.
constexpr std::size_t kSmallK = 32, kSmallCount = 8192;

__global__ void small_topk_kernel(const std::uint64_t* candidates, const unsigned* counts,
                                  std::size_t cap, int k, std::uint64_t* out) {
  __shared__ std::uint64_t warp_best[kSampleThreads / 32];
  __shared__ std::uint64_t picked;
  const std::size_t row = blockIdx.x;
  const unsigned count = counts[row];
  if (count > kSmallCount || count > cap) return;  // block-uniform: the sort takes this row
  const std::uint64_t* c = candidates + row * cap;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::uint64_t last = 0;
  for (int r = 0; r < k; ++r) {
    std::uint64_t m = ~std::uint64_t{0};
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
      const std::uint64_t key = c[i];
      if ((r == 0 || key > last) && key < m) m = key;
    }
    for (int o = 16; o > 0; o /= 2) {
      const std::uint64_t other = __shfl_xor_sync(0xffffffffu, m, o);
      m = other < m ? other : m;
    }
    if (lane == 0) warp_best[warp] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kSampleThreads / 32; ++w) m = warp_best[w] < m ? warp_best[w] : m;
      picked = m;
      out[row * cap + r] = m;
    }
    __syncthreads();
    last = picked;
  }
}

// Row r's segment of the candidate buffer: [r * cap, r * cap + count), or empty where the
// candidates overflowed it (that row is sorted whole instead) or small_topk_kernel took it.
__global__ void segments_kernel(const unsigned* counts, std::size_t rows, std::size_t cap,
                                bool small_done, std::int64_t* begin, std::int64_t* end) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < rows;
       r += std::size_t{gridDim.x} * blockDim.x) {
    const bool sorted = counts[r] > cap || (small_done && counts[r] <= kSmallCount);
    begin[r] = static_cast<std::int64_t>(r * cap);
    end[r] = begin[r] + (sorted ? 0 : counts[r]);
  }
}

// With out null: counts[r] = how many keys of row r lie in (lo[r], hi[r]); else they are
// written at out[offsets[r] + ...] (counts zeroed again first).
__global__ void between_kernel(const float* dist, std::size_t n, std::size_t stride,
                               const std::uint64_t* lo_hi, unsigned* counts,
                               const std::int64_t* offsets, std::uint64_t* out) {
  const std::size_t row = blockIdx.y;
  const std::uint64_t lo = lo_hi[2 * row], hi = lo_hi[2 * row + 1];
  const float* d = dist + row * stride;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t key = sort_key(d[i], static_cast<std::uint32_t>(i));
    if (lo < key && key < hi) {
      const unsigned pos = atomicAdd(&counts[row], 1u);
      if (out) out[offsets[row] + pos] = key;
    }
  }
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
}

}  // namespace

void TopKSelector::release() {
  thresholds_.release();
  counts_.release();
  candidates_.release();
  sorted_.release();
  bounds_.release();
  offsets_.release();
  temp_.release();
}

void TopKSelector::sort_one(std::size_t count, cudaStream_t s) {
  std::size_t temp_bytes = 0;
  LCRWMD_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, candidates_.data(),
                                                   sorted_.data(), count, 0, 64, s));
  temp_.reserve(temp_bytes);
  LCRWMD_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.data(), temp_bytes, candidates_.data(),
                                                   sorted_.data(), count, 0, 64, s));
}

void TopKSelector::sort_segments(std::size_t total, std::size_t rows, const std::int64_t* begin,
                                 const std::int64_t* end, cudaStream_t s) {
  std::size_t temp_bytes = 0;
  LCRWMD_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
      nullptr, temp_bytes, candidates_.data(), sorted_.data(), static_cast<std::int64_t>(total),
      static_cast<std::int64_t>(rows), begin, end, s));
  temp_.reserve(temp_bytes);
  LCRWMD_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
      temp_.data(), temp_bytes, candidates_.data(), sorted_.data(),
      static_cast<std::int64_t>(total), static_cast<std::int64_t>(rows), begin, end, s));
}

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
  host_counts_.reserve(group);
  host_keys_.reserve(group * kk);
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
    // The segments are laid out on the device: no round trip before the sort.
    const bool small = kk <= kSmallK;
    if (small) {
      small_topk_kernel<<<static_cast<unsigned>(rows), kSampleThreads, 0, s>>>(
          candidates_.data(), counts_.data(), cap, static_cast<int>(kk), sorted_.data());
      LCRWMD_LAUNCH_CHECK();
    }
    if (small) {
      segments_kernel<<<grid_for(rows), 256, 0, s>>>(counts_.data(), rows, cap, small,
                                                     offsets_.data(), offsets_.data() + group);
      LCRWMD_LAUNCH_CHECK();
      sort_segments(rows * cap, rows, offsets_.data(), offsets_.data() + group, s);
    } else if (rows == 1) {
      // One row, k large: its candidate count first (one round trip), then a radix sort.
      LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), counts_.data(), sizeof(unsigned),
                                        cudaMemcpyDeviceToHost, s));
      LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
      if (host_counts_.data()[0] <= cap) sort_one(host_counts_.data()[0], s);
    } else {
      segments_kernel<<<grid_for(rows), 256, 0, s>>>(counts_.data(), rows, cap, small,
                                                     offsets_.data(), offsets_.data() + group);
      LCRWMD_LAUNCH_CHECK();
      sort_segments(rows * cap, rows, offsets_.data(), offsets_.data() + group, s);
    }
    LCRWMD_CUDA_CHECK(cudaMemcpy2DAsync(
        host_keys_.data(), kk * sizeof(std::uint64_t), sorted_.data(), cap * sizeof(std::uint64_t),
        kk * sizeof(std::uint64_t), rows, cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), counts_.data(), rows * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    std::copy(host_keys_.data(), host_keys_.data() + rows * kk, out.data() + r0 * kk);
    // Rows whose candidates overflowed the buffer (ties, or an unlucky sample): sorted whole.
    for (std::size_t r = 0; r < rows; ++r)
      if (host_counts_.data()[r] > cap)
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

void TopKSelector::collect_between(const float* dist, std::size_t n_rows, std::size_t n,
                                   std::size_t stride, const std::vector<std::uint64_t>& lo,
                                   const std::vector<std::uint64_t>& hi,
                                   std::vector<std::uint64_t>& offsets,
                                   std::vector<std::uint64_t>& keys, cudaStream_t s) {
  offsets.assign(n_rows + 1, 0);
  keys.clear();
  if (n_rows == 0 || n == 0) return;
  for (std::size_t r0 = 0; r0 < n_rows; r0 += kMaxGridY) {
    const std::size_t rows = std::min<std::size_t>(kMaxGridY, n_rows - r0);
    const float* block = dist + r0 * stride;
    std::vector<std::uint64_t> lo_hi(2 * rows);
    for (std::size_t r = 0; r < rows; ++r) {
      lo_hi[2 * r] = lo[r0 + r];
      lo_hi[2 * r + 1] = hi[r0 + r];
    }
    bounds_.upload(lo_hi.data(), lo_hi.size(), s);
    counts_.reserve(rows);
    LCRWMD_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, rows * sizeof(unsigned), s));
    const dim3 grid(grid_for(n), static_cast<unsigned>(rows));
    between_kernel<<<grid, 256, 0, s>>>(block, n, stride, bounds_.data(), counts_.data(), nullptr,
                                        nullptr);
    LCRWMD_LAUNCH_CHECK();
    host_counts_.reserve(rows);
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), counts_.data(), rows * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    host_offsets_.reserve(2 * rows);
    std::int64_t* begin = host_offsets_.data();
    std::int64_t* end = begin + rows;
    std::int64_t total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      begin[r] = total;
      total += host_counts_.data()[r];
      end[r] = total;
    }
    const std::size_t t = static_cast<std::size_t>(total);
    const std::size_t first = keys.size();
    for (std::size_t r = 0; r < rows; ++r)
      offsets[r0 + r + 1] = first + static_cast<std::size_t>(end[r]);
    if (t == 0) continue;
    offsets_.upload(host_offsets_.data(), 2 * rows, s);
    candidates_.reserve(t);
    sorted_.reserve(t);
    LCRWMD_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, rows * sizeof(unsigned), s));
    between_kernel<<<grid, 256, 0, s>>>(block, n, stride, bounds_.data(), counts_.data(),
                                        offsets_.data(), candidates_.data());
    LCRWMD_LAUNCH_CHECK();
    if (rows == 1)
      sort_one(t, s);
    else
      sort_segments(t, rows, offsets_.data(), offsets_.data() + rows, s);
    host_keys_.reserve(t);
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_keys_.data(), sorted_.data(), t * sizeof(std::uint64_t),
                                      cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    keys.insert(keys.end(), host_keys_.data(), host_keys_.data() + t);
  }
}

}  // namespace lcrwmd::cuda
