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

  // Per row r: the documents whose key (dist[r * stride + i], i) lies strictly between lo[r] and
  // hi[r], as sort keys ascending, row r's at keys[offsets[r] .. offsets[r + 1]). Synchronises.
  void collect_between(const float* dist, std::size_t n_rows, std::size_t n, std::size_t stride,
                       const std::vector<std::uint64_t>& lo, const std::vector<std::uint64_t>& hi,
                       std::vector<std::uint64_t>& offsets, std::vector<std::uint64_t>& keys,
                       cudaStream_t s);

  // Device scratch, given back.
  void release();

 private:
  void sort_whole_row(const float* row, std::size_t n, std::size_t k, std::uint64_t* out,
                      cudaStream_t s);

  // Sorts candidates_[0, count) into sorted_: one segment (CUB's segmented sort takes a slow
  // path for one large segment).
  void sort_one(std::size_t count, cudaStream_t s);
  // Sorts segments [begin[r], end[r]) of candidates_ into sorted_ (CUB's segmented sort).
  void sort_segments(std::size_t total, std::size_t rows, const std::int64_t* begin,
                     const std::int64_t* end, cudaStream_t s);

  DeviceArray<float> thresholds_;
  DeviceArray<unsigned> counts_;
  DeviceArray<std::uint64_t> candidates_, sorted_, bounds_;
  DeviceArray<std::int64_t> offsets_;
  DeviceArray<unsigned char> temp_;
  PinnedArray<unsigned> host_counts_;
  PinnedArray<std::uint64_t> host_keys_;
  PinnedArray<std::int64_t> host_offsets_;
};

}  // namespace lcrwmd::cuda
