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

__device__ inline float sq_dist(const float* a, const float* b, int dim) {
  float s = 0;
  for (int d = 0; d < dim; ++d) {
    const float t = a[d] - b[d];
    s += t * t;
  }
  return s;
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
