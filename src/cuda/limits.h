#pragma once
// Shapes the CUDA kernels support, for the planner (plain C++) and the kernels alike.

namespace lcrwmd::cuda {

// Columns of one phase-1 tile: the epilogue stages a tile row per warp in shared memory.
inline constexpr int kMaxTileColumns = 1024;
// Columns of one phase-1 GEMM (several tiles): wider GEMMs run faster (BENCHMARKS.md, "The
// GPU"), and the product takes vocabulary x this many floats.
inline constexpr int kMaxGemmColumns = 4096;

}  // namespace lcrwmd::cuda
