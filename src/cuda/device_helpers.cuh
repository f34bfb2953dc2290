#pragma once
// What the CUDA kernel files share: block shape, launch sizes and warp-level helpers.
#include <cstddef>

namespace lcrwmd::cuda::device {

inline constexpr int kWarps = 8;  // warps per block
inline constexpr int kThreads = kWarps * 32;
inline constexpr unsigned kFull = 0xffffffffu;

inline unsigned blocks_for(std::size_t items, std::size_t per_block) {
  const std::size_t b = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(b < (1u << 20) ? (b ? b : 1) : (1u << 20));
}

__device__ inline float warp_min(float x) {
  for (int o = 16; o > 0; o /= 2) x = fminf(x, __shfl_xor_sync(kFull, x, o));
  return x;
}
__device__ inline float warp_sum(float x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(kFull, x, o);
  return x;
}

// A block's 32 documents x 32 queries, the sparse passes' layout: a lane per query (so that a
// document word's entries for consecutive queries are read together), the results staged in
// shared memory and written a query's row at a time (coalesced). value(i, j) is called for
// i < n_docs and j < n_queries only; write(j, i, value) stores a result. Block-uniform.
template <typename Value, typename Write>
__device__ void docs_by_queries(std::size_t n_docs, int n_queries, Value value, Write write) {
  __shared__ float res[32][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int j = blockIdx.y * 32 + lane;
  const std::size_t i0 = static_cast<std::size_t>(blockIdx.x) * 32;
  for (int t = 0; t < 32 / kWarps; ++t) {
    const int local = warp * (32 / kWarps) + t;
    const std::size_t i = i0 + local;
    res[lane][local] = i < n_docs && j < n_queries ? value(i, j) : 0.0f;
  }
  __syncthreads();
  for (int t = 0; t < 32 / kWarps; ++t) {
    const int jl = warp * (32 / kWarps) + t;
    const int jj = blockIdx.y * 32 + jl;
    const std::size_t i = i0 + lane;
    if (jj < n_queries && i < n_docs) write(jj, i, res[jl][lane]);
  }
}

__device__ inline float sq_dist(const float* a, const float* b, int dim) {
  float s = 0;
  for (int d = 0; d < dim; ++d) {
    const float t = a[d] - b[d];
    s += t * t;
  }
  return s;
}

// The lanes' sums added in a fixed tree (16, 8, 4, 2, 1 apart) into lane 0, then given to all.
__device__ inline float lanes_sum(float s) {
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(kFull, s, o);
  return __shfl_sync(kFull, s, 0);
}
// The squared distance certified phase 1 reports (kernels.h), by a whole warp: lane l sums
// dimensions l, l + 32, ..., then lanes_sum. Every lane gets the same value, and the same for
// the same vectors wherever it is computed (the epilogue's minima, D2's), whatever the GEMM's
// precision. Warp-uniform: all 32 lanes call it.
__device__ inline float exact_sq_dist(const float* a, const float* b, int dim) {
  float s = 0;
  for (int d = static_cast<int>(threadIdx.x & 31); d < dim; d += 32) {
    const float t = a[d] - b[d];
    s = fmaf(t, t, s);
  }
  return lanes_sum(s);
}

// The same with a's share of each lane in registers (held[i] = a[lane + 32 i], dimensions up
// to 32 kHeldDims): one vector against many, its loads issued long before they are needed.
inline constexpr int kHeldDims = 10;
__device__ inline void hold_vector(const float* a, int dim, float (&held)[kHeldDims]) {
  const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
  for (int i = 0; i < kHeldDims; ++i) held[i] = lane + 32 * i < dim ? a[lane + 32 * i] : 0.0f;
}
__device__ inline float exact_sq_dist(const float (&held)[kHeldDims], const float* b, int dim) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  float s = 0;
#pragma unroll
  for (int i = 0; i < kHeldDims; ++i)
    if (lane + 32 * i < dim) {
      const float t = held[i] - b[lane + 32 * i];
      s = fmaf(t, t, s);
    }
  return lanes_sum(s);
}

// Warp-uniform loop bounds: every lane runs the same number of iterations, so the shuffles
// inside see all 32 lanes.
__device__ inline std::size_t warp_id_global() {
  return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
}
__device__ inline std::size_t warps_in_grid() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x / 32;
}

}  // namespace lcrwmd::cuda::device
