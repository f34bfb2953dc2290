#pragma once
// Top-k on the device, exact and in the project's order (ascending distance, ties by the
// smaller document: sort_key.h).
//
// A row's k-th smallest of an even sample of 2048 of its distances is a threshold that at least
// k distances meet; the distances at or under it (about k * n / 2048 of them) are collected as
// sort keys and sorted per row (CUB's segmented sort). A row whose candidates overflow the
// buffer (ties, or an unlucky sample) is sorted whole instead.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_memory.h"

namespace lcrwmd::cuda {

class TopKSelector {
 public:
  // Rows [0, n_rows) of the n-column block `dist` (row stride `stride`): each row's
  // min(k, n) best as sort keys with the column as document, best first, into
  // out[row * min(k, n) + r]. Synchronises the stream.
  void select(const float* dist, std::size_t n_rows, std::size_t n, std::size_t stride,
              std::size_t k, std::vector<std::uint64_t>& out, cudaStream_t s);

  // Documents whose key (distance[i], i) lies strictly between lo and hi, ascending by
  // document, into `list` (room for n); returns how many. Synchronises the stream.
  std::size_t collect_between(const float* distances, std::size_t n, std::uint64_t lo,
                              std::uint64_t hi, std::uint32_t* list, cudaStream_t s);

 private:
  void sort_whole_row(const float* row, std::size_t n, std::size_t k, std::uint64_t* out,
                      cudaStream_t s);

  DeviceArray<float> thresholds_;
  DeviceArray<unsigned> counts_;
  DeviceArray<std::uint64_t> candidates_, sorted_;
  DeviceArray<std::int64_t> offsets_;
  DeviceArray<unsigned char> temp_;
  std::vector<unsigned> host_counts_;
};

}  // namespace lcrwmd::cuda
