#include "methods/phase1.h"

#include <algorithm>

namespace lcrwmd {

namespace {
// Batch words per GEMM call: a tile's hi block (tile rows x this) stays in the CPU's L2.
constexpr std::size_t kDefaultBlockWords = 1024;
}  // namespace

Phase1Tiles::Phase1Tiles(const Index& index, const Phase1& phase1, const BatchWords& batch)
    : index_(index),
      gemm_(phase1.gemm),
      batch_(batch),
      columns_(phase1.gemm.columns(batch.vectors.data(), batch.norms.data(), batch.words.size())),
      block_(std::min(phase1.block_words ? phase1.block_words : kDefaultBlockWords,
                      std::max<std::size_t>(batch.words.size(), 1))) {}

Phase1Tiles::Workspace Phase1Tiles::workspace() const {
  Workspace ws;
  ws.lo.resize(rows() * batch_.words.size());
  ws.hi.resize(rows() * block_);
  return ws;
}

void Phase1Tiles::bound(Workspace& ws, std::size_t t, std::size_t w0, std::size_t wc) const {
  const std::size_t R = rows(), n = rows_in(t), u0 = first_row(t);
  float* lo = ws.lo_column(w0, R);
  gemm_.products(ws.gemm, columns_, t, w0, wc, lo);
  const cpu::Kernels& k = cpu::kernels();
  const cpu::BoundTermArrays row_terms = gemm_.bound_rows(u0);
  for (std::size_t c = 0; c < wc; ++c) {
    const cpu::bounds::Terms& ct = columns_.terms[w0 + c];
    k.bound_sq_distances(lo + c * R, row_terms, {batch_.norms[w0 + c], ct.a, ct.b, ct.c}, n,
                         lo + c * R, ws.hi_column(c, R));
  }
}

}  // namespace lcrwmd
