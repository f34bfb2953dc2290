#pragma once
// Phase 1 of the linear-complexity methods (LC-RWMD, ACT/ICT, WMD's bounds) on the CPU: the
// squared distance of every vocabulary word to every word of a batch of queries, as a
// certified interval [lo, hi] from the searcher's GEMM in whatever precision it runs
// (cpu/word_gemm.h), and, where the interval cannot decide, the distance itself: sq_dist of
// the two vectors in float, in a fixed order (simd.h). That is the value every result is made
// of, so results do not depend on the precision, the GEMM's kernel or the SIMD level.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/batch_words.h"
#include "cpu/simd.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/index.h"
#include "util/large_array.h"

namespace lcrwmd {

// Vocabulary words per phase-1 tile (phase1.cpp says why).
inline constexpr std::size_t kDefaultTileRows = 256;
// Rows of a strip of a tile's lower bounds, read while it is in the L2 cache (LC-RWMD): one
// cache line of each batch word's, 640 KB for a batch of 10,000 words.
inline constexpr std::size_t kStripRows = 16;

// What a CPU method computes phase 1 with: the searcher's GEMM and its tile shape.
struct Phase1 {
  const cpu::WordGemm& gemm;
  std::size_t tile_rows = 0;    // vocabulary words per tile; 0: from the batch's size
  std::size_t block_words = 0;  // batch words per GEMM call; 0: the default
};

// One batch's phase 1, tile by tile: a tile is rows() vocabulary words against every batch
// word, computed block_words() batch words at a time.
// For each entry, the estimate less the vocabulary word's squared norm (g) and, where asked,
// the interval [lo, hi] holding the exact squared distance.
class Phase1Tiles {
 public:
  Phase1Tiles(const Index& index, const Phase1& phase1, const BatchWords& batch);

  std::size_t rows() const { return rows_; }
  std::size_t n_tiles() const { return (index_.vocab_size() + rows_ - 1) / rows_; }
  std::size_t block_words() const { return block_; }
  // Vocabulary words [u0, u0 + n) of tile t.
  std::size_t first_row(std::size_t t) const { return t * rows(); }
  std::size_t rows_in(std::size_t t) const {
    return std::min(rows(), index_.vocab_size() - first_row(t));
  }

  // One thread's scratch: the GEMM's, and columns of `stride` vocabulary words: g and lo for
  // every batch word, hi for the block last bounded. Without `estimates` (a consumer of
  // strips alone, where strips_alone()) g is left empty.
  struct Workspace {
    Workspace(const Phase1Tiles& tiles, std::size_t stride, bool estimates = true);
    std::size_t stride;
    cpu::WordGemm::Workspace gemm;
    LargeArray<float> g, lo;  // stride x every batch word
    std::vector<float> hi;
    float* g_column(std::size_t w) { return g.data() + w * stride; }
    const float* g_column(std::size_t w) const { return g.data() + w * stride; }
    float* lo_column(std::size_t w) { return lo.data() + w * stride; }
    float* hi_column(std::size_t c) { return hi.data() + c * stride; }
  };

  // Vocabulary words [u0, u0 + n) (n <= ws.stride) against batch words [w0, w0 + wc):
  // estimate() fills ws.g's columns w0 .. w0 + wc; bound() also ws.lo's and, with `upper`,
  // ws.hi's columns 0 .. wc.
  void estimate(Workspace& ws, std::size_t u0, std::size_t n, std::size_t w0, std::size_t wc) const;
  void bound(Workspace& ws, std::size_t u0, std::size_t n, std::size_t w0, std::size_t wc,
             bool upper) const;
  // Whether bound_strip() needs no estimate() before it: it computes its bounds from the
  // rounded vectors (int8 where the CPU has VNNI: cpu/word_gemm.h), so a consumer of strips
  // alone skips the tile's estimates, never writing them.
  bool strips_alone() const { return gemm_.direct_bounds(); }
  // After estimate() of every batch word (unless strips_alone()): the lower bounds of rows
  // [u0 + r0, u0 + r0 + n) against every batch word, column c at out + c * ld (a strip of the
  // tile a consumer reads while it is in the CPU's caches; n <= kStripRows), and of one entry;
  // the same bits as bound()'s.
  void bound_strip(const Workspace& ws, std::size_t u0, std::size_t r0, std::size_t n, float* out,
                   std::size_t ld) const;
  // row: row_terms(u0 + r), read once for many words.
  float lower(const Workspace& ws, const cpu::BoundTerms& row, std::size_t r, std::size_t w) const {
    // bound_sq_distances' operations in its order, NaN to 0 as there.
    const float low =
        row.sq + ws.g_column(w)[r] - cpu::bounds::beta({row.a, row.b, row.c}, columns_.terms[w]);
    return low > 0.0f ? low : 0.0f;
  }

  // The squared distance of vocabulary word u to batch word w, exactly as reported.
  float exact(std::size_t u, std::size_t w) const {
    return cpu::kernels().sq_dist(index_.vector(u), batch_.vectors.data() + w * index_.dim(),
                                  index_.dim());
  }
  // Vocabulary word u's and batch word w's shares of the bound.
  cpu::BoundTerms row_terms(std::size_t u) const {
    const cpu::bounds::Terms t = gemm_.row_terms(u);
    return {index_.sq_norms()[u], t.a, t.b, t.c};
  }
  cpu::BoundTerms column_terms(std::size_t w) const {
    const cpu::bounds::Terms& t = columns_.terms[w];
    return {batch_.norms[w], t.a, t.b, t.c};
  }
  // Half the width of the interval of (u, w): lo + 2 half_width(u, w) bounds the distance from
  // above, for a cache that kept lo alone (the slack in word_bounds.h's kappa takes the
  // roundings of that sum, as of every other evaluation of an estimate here).
  float half_width(std::size_t u, std::size_t w) const {
    return cpu::bounds::beta(gemm_.row_terms(u), columns_.terms[w]);
  }

 private:
  const Index& index_;
  const cpu::WordGemm& gemm_;
  const BatchWords& batch_;
  cpu::WordGemm::Columns columns_;
  std::vector<cpu::BoundTerms> column_bounds_;  // per batch word: {0, its bound terms}
  std::size_t rows_, block_;
};

}  // namespace lcrwmd
