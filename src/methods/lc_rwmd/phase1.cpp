#include "methods/lc_rwmd/phase1.h"

#include <algorithm>

namespace lcrwmd {

namespace {
// Batch words per GEMM call: a tile's hi block (tile rows x this) stays in the CPU's L2.
constexpr std::size_t kDefaultBlockWords = 1024;
// kDefaultTileRows: oneDNN's calls cost more per row in short tiles, and a batch's word vectors,
// read once per tile by the recomputation, want tall tiles too; the tile's estimates for a
// large batch (rows x words floats) then live in L3, which costs less (BENCHMARKS.md,
// "Precision").
}  // namespace

Phase1Tiles::Phase1Tiles(const Index& index, const Phase1& phase1, const BatchWords& batch)
    : index_(index),
      gemm_(phase1.gemm),
      batch_(batch),
      columns_(phase1.gemm.columns(batch.vectors.data(), batch.norms.data(), batch.words.size())),
      rows_(phase1.tile_rows ? phase1.tile_rows : kDefaultTileRows),
      block_(std::min(phase1.block_words ? phase1.block_words : kDefaultBlockWords,
                      std::max<std::size_t>(batch.words.size(), 1))) {
  column_bounds_.reserve(columns_.size());
  for (const cpu::bounds::Terms& t : columns_.terms)
    column_bounds_.push_back({0.0f, t.a, t.b, t.c});
}

Phase1Tiles::Workspace::Workspace(const Phase1Tiles& tiles, std::size_t rows, bool estimates)
    : stride(rows) {
  if (estimates) g.resize(stride * tiles.batch_.words.size());
}

void Phase1Tiles::estimate(Workspace& ws, std::size_t u0, std::size_t n, std::size_t w0,
                           std::size_t wc) const {
  gemm_.estimates(ws.gemm, columns_, u0, n, w0, wc, ws.g_column(w0), ws.stride);
}

void Phase1Tiles::bound(Workspace& ws, std::size_t u0, std::size_t n, std::size_t w0,
                        std::size_t wc, bool upper) const {
  estimate(ws, u0, n, w0, wc);
  ws.lo.resize(ws.stride * batch_.words.size());
  if (upper) ws.hi.resize(ws.stride * block_);
  const cpu::Kernels& k = cpu::kernels();
  const cpu::BoundTermArrays row_terms = gemm_.bound_rows(u0);
  for (std::size_t c = 0; c < wc; ++c)
    k.bound_sq_distances(ws.g_column(w0 + c), row_terms, column_bounds_[w0 + c], n,
                         ws.lo_column(w0 + c), upper ? ws.hi_column(c) : nullptr);
}

void Phase1Tiles::bound_strip(const Workspace& ws, std::size_t u0, std::size_t r0, std::size_t n,
                              float* out, std::size_t ld) const {
  if (strips_alone()) return gemm_.lower_bounds(columns_, u0 + r0, n, out, ld);
  cpu::kernels().bound_columns(ws.g.data() + r0, ws.stride, gemm_.bound_rows(u0 + r0), n,
                               column_bounds_.data(), column_bounds_.size(), out, ld);
}

}  // namespace lcrwmd
