#pragma once
// The shape of the D2 kernels, shared by RWMD's direction (kernels.cu) and ACT's
// (act_kernels.cu): a block per (document, query) pair, its distance from a block-uniform
// device functor `Distance{}(args, doc, query)` that every thread calls and thread 0 holds.
#include <cstddef>
#include <cstdint>

#include "cuda/check.h"
#include "cuda/device_helpers.cuh"
#include "cuda/kernels.h"

namespace lcrwmd::cuda::device {

// Listed pairs: out[l] = max(bound[j * bound_stride + doc], D2), or D2 without a bound.
template <typename Distance>
__global__ void reverse_pairs_kernel(ReverseArgs a, const std::uint32_t* docs,
                                     const std::uint32_t* queries, std::size_t n_pairs,
                                     const float* bound, std::size_t bound_stride, float* out) {
  for (std::size_t l = blockIdx.x; l < n_pairs; l += gridDim.x) {
    const std::uint32_t doc = docs[l], j = queries[l];
    const float d2 = Distance{}(a, doc, static_cast<int>(j));
    if (threadIdx.x == 0)
      out[l] = bound ? fmaxf(bound[static_cast<std::size_t>(j) * bound_stride + doc], d2) : d2;
  }
}

// Every document and query (a grid row per query): d = max(d, D2).
template <typename Distance>
__global__ void reverse_all_kernel(ReverseArgs a, float* d, std::size_t stride) {
  const int j = blockIdx.y;
  for (std::size_t i = blockIdx.x; i < a.docs.docs; i += gridDim.x) {
    const float d2 = Distance{}(a, i, j);
    if (threadIdx.x == 0) {
      float* x = d + static_cast<std::size_t>(j) * stride + i;
      *x = fmaxf(*x, d2);
    }
  }
}

template <typename Distance>
void launch_reverse_pairs(const ReverseArgs& a, const std::uint32_t* docs,
                          const std::uint32_t* queries, std::size_t n_pairs, const float* bound,
                          std::size_t bound_stride, float* out, cudaStream_t s) {
  if (n_pairs == 0) return;
  reverse_pairs_kernel<Distance><<<blocks_for(n_pairs, 1), kThreads, 0, s>>>(
      a, docs, queries, n_pairs, bound, bound_stride, out);
  LCRWMD_LAUNCH_CHECK();
}

template <typename Distance>
void launch_reverse_all(const ReverseArgs& a, float* d, std::size_t stride, cudaStream_t s) {
  if (a.docs.docs == 0 || a.q.n_queries == 0) return;
  const dim3 grid(blocks_for(a.docs.docs, 1), static_cast<unsigned>(a.q.n_queries));
  reverse_all_kernel<Distance><<<grid, kThreads, 0, s>>>(a, d, stride);
  LCRWMD_LAUNCH_CHECK();
}

}  // namespace lcrwmd::cuda::device
