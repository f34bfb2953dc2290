#pragma once
// Shapes the CUDA kernels support, for the planner (plain C++) and the kernels alike.

namespace lcrwmd::cuda {

// Columns of one phase-1 tile: the epilogue stages a tile row per warp in shared memory.
inline constexpr int kMaxTileColumns = 1024;

}  // namespace lcrwmd::cuda
