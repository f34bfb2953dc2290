#pragma once
// LC-RWMD's phase 1, made exact for one tile: each (vocabulary row, query)'s least squared
// distance to the query's words, from the least three lower bounds phase 1 kept of it
// (cpu::Least3). The word of least lower bound is recomputed first, for every pair at once and
// grouped by word (a batch's word vectors outgrow the CPU's caches: each is read once per
// tile), each (row, word) once however many queries share it. Its distance x bounds the
// nearest's; only a word whose lower bound is at most x can be nearer: the second least,
// recomputed where so, and the others only where the third least is too (rare).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/batch_words.h"
#include "cpu/simd.h"
#include "lcrwmd/index.h"
#include "methods/lc_rwmd/phase1.h"

namespace lcrwmd {

// One per thread: it keeps its scratch from tile to tile.
class TileMinima {
 public:
  TileMinima(const Index& index, const BatchWords& batch, const Phase1Tiles& tiles)
      : index_(index), batch_(batch), tiles_(tiles) {}

  // best[j * tiles.rows() + r] for the tile's rows r < rows from u0 and the batch's queries
  // j (+inf for a query with no words); returns the number of distances recomputed.
  std::size_t find(Phase1Tiles::Workspace& ws, std::size_t u0, std::size_t rows,
                   const cpu::Least3& least, float* best);

 private:
  // A (query, row) pair of the tile waiting for its distance: its place in the tile's arrays,
  // and its row.
  struct PendingPair {
    std::uint32_t pair, row;
  };

  const Index& index_;
  const BatchWords& batch_;
  const Phase1Tiles& tiles_;
  std::vector<std::uint32_t> word_;     // per pair, its least lower bound's word
  std::vector<std::uint32_t> by_word_;  // the pairs grouped by word: where each word's run ends
  std::vector<PendingPair> pending_;
  std::vector<const float*> vectors_;  // a run's distinct rows
  std::vector<float> found_;
  std::vector<std::uint32_t> slot_;  // per row: its place among the run's distinct rows
};

}  // namespace lcrwmd
