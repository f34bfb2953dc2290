#include "methods/phase1.h"

#include <algorithm>

namespace lcrwmd {

namespace {
// Batch words per GEMM call: a tile's hi block (tile rows x this) stays in the CPU's L2.
constexpr std::size_t kDefaultBlockWords = 1024;
// kDefaultTileRows: oneDNN's calls cost ~25% more at 64 rows than at 256 on one query's words,
// and a batch's word vectors, read once per tile by the recomputation, want tall tiles too
// (Set 1, 64 queries: 48 rows took 1.25x the phase-1 time of 256); the tile's estimates for a
// large batch (rows x words floats) then live in L3, which costs less.
}  // namespace

Phase1Tiles::Phase1Tiles(const Index& index, const Phase1& phase1, const BatchWords& batch)
    : index_(index),
      gemm_(phase1.gemm),
      batch_(batch),
      columns_(phase1.gemm.columns(batch.vectors.data(), batch.norms.data(), batch.words.size())),
      rows_(phase1.tile_rows ? phase1.tile_rows : kDefaultTileRows),
      block_(std::min(phase1.block_words ? phase1.block_words : kDefaultBlockWords,
                      std::max<std::size_t>(batch.words.size(), 1))) {}

Phase1Tiles::Workspace Phase1Tiles::workspace() const {
  Workspace ws;
  ws.g.resize(rows() * batch_.words.size());
  return ws;
}

void Phase1Tiles::estimate(Workspace& ws, std::size_t t, std::size_t w0, std::size_t wc) const {
  const std::size_t R = rows();
  gemm_.estimates(ws.gemm, columns_, first_row(t), rows_in(t), w0, wc, ws.g_column(w0, R), R);
}

void Phase1Tiles::bound(Workspace& ws, std::size_t t, std::size_t w0, std::size_t wc,
                        bool upper) const {
  estimate(ws, t, w0, wc);
  const std::size_t R = rows(), n = rows_in(t);
  ws.lo.resize(R * batch_.words.size());
  if (upper) ws.hi.resize(R * block_);
  const cpu::Kernels& k = cpu::kernels();
  const cpu::BoundTermArrays row_terms = gemm_.bound_rows(first_row(t));
  for (std::size_t c = 0; c < wc; ++c) {
    const cpu::bounds::Terms& ct = columns_.terms[w0 + c];
    k.bound_sq_distances(ws.g_column(w0 + c, R), row_terms, {0.0f, ct.a, ct.b, ct.c}, n,
                         ws.lo_column(w0 + c, R), upper ? ws.hi_column(c, R) : nullptr);
  }
}

cpu::BoundTerms Phase1Tiles::column_terms_max(const std::uint32_t* cols, std::size_t n) const {
  cpu::BoundTerms most{0.0f, 0.0f, 0.0f, 0.0f};
  for (std::size_t i = 0; i < n; ++i) {
    const cpu::BoundTerms t = column_terms(cols[i]);
    most = {std::max(most.sq, t.sq), std::max(most.a, t.a), std::max(most.b, t.b),
            std::max(most.c, t.c)};
  }
  return most;
}

}  // namespace lcrwmd
