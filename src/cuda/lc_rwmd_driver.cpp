// LC-RWMD on the device: phase 1 (GEMM spans, epilogues, B2) and each chunk's block.
#include <cuda_runtime_api.h>

#include <cmath>

#include "cuda/gemm.h"
#include "cuda/gpu_index_impl.h"

namespace lcrwmd {

using namespace cuda;

// Phase 1 of the batch against `rows` row vectors (the vocabulary, or the quadratic RWMD's
// gathered words): per span one GEMM (bf16 where `bounded` has the rows rounded), then the
// epilogue of each of its tiles, into z and, where set, the cache and the nearest other words.
void GpuIndex::Impl::phase1_rows(const QueryBatch& b, const float* row_vectors,
                                 const float* row_norms, const std::uint32_t* row_word,
                                 std::size_t rows, CertifiedRows bounded, float* cache_out,
                                 unsigned* nearest_out) {
  const std::size_t m = index.dim(), stride = bf16_stride(m);
  for (const QueryBatch::Span& span : b.spans) {
    const std::size_t ld = static_cast<std::size_t>(span.c1 - span.c0);
    const auto c0 = static_cast<std::size_t>(span.c0);
    tile.reserve(rows * ld);
    if (bounded.bf16)
      gemm_neg2_bf16(blas.get(), bounded.bf16, rows, batch.bf16 + c0 * stride, ld, m, stride,
                     tile.data(), ld);
    else
      gemm_neg2(blas.get(), row_vectors, rows, batch.vectors + c0 * m, ld, m, tile.data(), ld);
    for (std::size_t t = span.t0; t < span.t1; ++t) {
      const QueryBatch::Tile& tl = b.tiles[t];
      Phase1Args a;
      a.tile = tile.data() + (tl.c0 - span.c0);
      a.rows = rows;
      a.cols = tl.c1 - tl.c0;
      a.ld = ld;
      a.dim = static_cast<int>(m);
      a.row_vectors = row_vectors;
      a.row_norms = row_norms;
      a.row_word = row_word;
      a.col_vectors = batch.vectors + static_cast<std::size_t>(tl.c0) * m;
      a.col_norms = batch.norms + tl.c0;
      a.col_word = batch.word + tl.c0;
      a.row_terms = bounded.terms;
      a.col_terms = bounded.terms ? batch.terms + tl.c0 : nullptr;
      a.col0 = tl.c0;
      a.q = batch.q;
      a.q0 = tl.q0;
      a.tile_queries = tl.q1 - tl.q0;
      a.tile_begin = batch.ranges + tl.ranges;
      a.tile_end = a.tile_begin + a.tile_queries;
      a.z = z.data();
      a.cache = cache_out;
      a.cache_stride = b.positions();
      a.nearest = nearest_out ? nearest_out + tl.c0 : nullptr;
      phase1_epilogue(a, stream.get());
    }
  }
}

// Phase 1 of LC-RWMD for the batch: Z (v x nq, sqrt of the minima); with cache_distances,
// the cache of squared distances D2 (and ACT) reads; for Reverse::bound also B2's terms in Z
// and nn_sum. Certified (word_terms.h) in the resident set's precision unless TF32 is allowed;
// ACT's slots read the distances themselves, so it asks for none.
void GpuIndex::Impl::phase1(const QueryBatch& b, Reverse rev, bool cache_distances, bool certify) {
  const cudaStream_t s = stream.get();
  const std::size_t v = index.vocab_size(), w = b.columns();
  z.reserve(v * b.nq);
  if (cache_distances) cache.reserve(v * b.positions());
  const bool with_bound = rev == Reverse::bound;
  if (with_bound) {
    nearest.reserve(w);
    fill(reinterpret_cast<float*>(nearest.data()), w, INFINITY, s);
  }
  certified = certify && !options.allow_tf32;
  CertifiedRows rows;
  if (certified)
    rows = {set.terms.data(), set.precision == Precision::bf16 ? set.bf16.data() : nullptr};
  phase1_rows(b, set.vectors.data(), set.norms.data(), nullptr, v, rows,
              cache_distances ? cache.data() : nullptr, with_bound ? nearest.data() : nullptr);
  if (!with_bound) return;
  nn_sum.reserve(b.nq);
  finish_bound_terms(batch.q, batch.word, nearest.data(), z.data(), nn_sum.data(), s);
}

ReverseArgs GpuIndex::Impl::reverse_args(const QueryBatch& b, const DeviceCsr& docs,
                                         std::uint32_t act_reach) const {
  ReverseArgs a{docs, cache.data(), b.positions(), batch.q, act_reach, {}};
  if (certified && act_reach == 0)
    a.certified = {set.terms.data(), set.vectors.data(), batch.terms,
                   batch.vectors,    batch.word,         static_cast<int>(index.dim())};
  return a;
}

// The batch's distances (or bounds) to the chunk's documents: dst[j * n_c + i].
void GpuIndex::Impl::lc_rwmd_block(const QueryBatch& b, const Chunk& c, Reverse rev, float* dst) {
  const cudaStream_t s = stream.get();
  const std::size_t n = c.docs.size();
  sparse_times_z(c.csr(), z.data(), static_cast<int>(b.nq), rev == Reverse::bound, nn_sum.data(),
                 dst, n, s);
  if (rev == Reverse::full) reverse_all(reverse_args(b, c.csr(), 0), dst, n, s);
}

}  // namespace lcrwmd
