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

#include "cpu/simd.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/index.h"
#include "methods/batch_words.h"

namespace lcrwmd {

// What a CPU method computes phase 1 with: the searcher's GEMM (its vocabulary rounded once)
// and how many batch words one GEMM call takes.
struct Phase1 {
  const cpu::WordGemm& gemm;
  std::size_t block_words = 0;  // 0: the default
};

// One batch's phase 1, tile by tile: a tile is the GEMM's tile_rows() vocabulary words against
// every batch word, computed block_words() batch words at a time.
class Phase1Tiles {
 public:
  Phase1Tiles(const Index& index, const Phase1& phase1, const BatchWords& batch);

  std::size_t rows() const { return gemm_.tile_rows(); }
  std::size_t n_tiles() const { return gemm_.n_tiles(); }
  std::size_t block_words() const { return block_; }
  // Vocabulary words [u0, u0 + n) of tile t.
  std::size_t first_row(std::size_t t) const { return t * rows(); }
  std::size_t rows_in(std::size_t t) const {
    return std::min(rows(), index_.vocab_size() - first_row(t));
  }

  // One thread's scratch: the GEMM's, and the tile's intervals, column-major with stride
  // rows(): lo for every batch word, hi for the block last computed.
  struct Workspace {
    cpu::WordGemm::Workspace gemm;
    std::vector<float> lo, hi;
    float* lo_column(std::size_t w, std::size_t rows) { return lo.data() + w * rows; }
    float* hi_column(std::size_t c, std::size_t rows) { return hi.data() + c * rows; }
  };
  Workspace workspace() const;

  // The intervals of tile t's words against batch words [w0, w0 + wc): ws.lo's columns
  // w0 .. w0 + wc, ws.hi's columns 0 .. wc.
  void bound(Workspace& ws, std::size_t t, std::size_t w0, std::size_t wc) const;

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
  // roundings of that sum).
  float half_width(std::size_t u, std::size_t w) const {
    return cpu::bounds::beta(gemm_.row_terms(u), columns_.terms[w]);
  }

 private:
  const Index& index_;
  const cpu::WordGemm& gemm_;
  const BatchWords& batch_;
  cpu::WordGemm::Columns columns_;
  std::size_t block_;
};

// A tile's candidates: the (row, column) pairs whose distance the intervals left open, listed
// column by column and then recomputed row after row, so that each vocabulary vector is read
// once, in memory order (the tile's rows follow one another in the index).
class TileCandidates {
 public:
  void clear(std::size_t rows) {
    rows_ = rows;
    row_.clear();
    column_.clear();
  }
  // Tile rows rows[0 .. n) are candidates of column p (a position in BatchWords::cols).
  void add(std::uint32_t p, const std::uint32_t* rows, std::size_t n) {
    row_.insert(row_.end(), rows, rows + n);
    column_.insert(column_.end(), n, p);
  }
  std::size_t size() const { return row_.size(); }

  // f(r, p, d) for every candidate, d its exact squared distance, rows ascending and, within a
  // row, columns in the order they were added.
  template <typename F>
  void recompute(const Phase1Tiles& tiles, const BatchWords& batch, std::size_t u0, F&& f) {
    start_.assign(rows_ + 1, 0);
    for (std::uint32_t r : row_) ++start_[r + 1];
    for (std::size_t r = 0; r < rows_; ++r) start_[r + 1] += start_[r];
    sorted_.resize(row_.size());
    next_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < row_.size(); ++i) sorted_[next_[row_[i]]++] = column_[i];
    for (std::size_t r = 0; r < rows_; ++r)
      for (std::size_t i = start_[r]; i < start_[r + 1]; ++i) {
        const std::uint32_t p = sorted_[i];
        f(r, p, tiles.exact(u0 + r, batch.cols[p]));
      }
  }

 private:
  std::size_t rows_ = 0;
  std::vector<std::uint32_t> row_, column_, sorted_;
  std::vector<std::size_t> start_, next_;
};

}  // namespace lcrwmd
