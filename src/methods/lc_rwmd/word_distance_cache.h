#pragma once
// The word distances symmetric LC-RWMD keeps for the other direction (D2), for symmetric ACT and
// for WMD's bounds: for every vocabulary word, a lower bound of its squared distance to each of
// the batch's query words, query after query (BatchWords::cols order), so that a document's D2
// reads one contiguous segment per document word. What phase 1 certified is kept (lo), not the
// distance: a bound is all WMD's bounds need, and exact values cost a recomputation each, made
// only where a result needs one (exact(), with upper() telling which), or for every pair where
// every document needs D2 (make_exact()).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/batch_words.h"
#include "methods/lc_rwmd/phase1.h"
#include "util/large_array.h"

namespace lcrwmd {

class WordDistanceCache {
 public:
  WordDistanceCache(const Index& index, const BatchWords& batch, const Phase1Tiles& tiles);

  // Bytes the cache of a batch of `columns` query words (cols) takes.
  static std::size_t bytes(const Index& index, std::size_t columns) {
    return index.vocab_size() * padded(columns) * sizeof(float);
  }

  // Floats from one vocabulary word's row to the next: the batch's query words, rounded up to
  // a 64-byte line where there are sixteen or more (rows are written a line at a time); fewer
  // (a typed query alone) packed: five words take 20 bytes a vocabulary word, not 64, so that
  // the rows the walks and refinements read at random stay in the CPU's caches. Once exact, the
  // query words alone.
  std::size_t stride() const { return stride_; }
  // Vocabulary word u's lower bounds, every query's words in turn.
  const float* row(std::size_t u) const { return data_.data() + u * stride_; }

  // Query j's: rows[p] points to words[p]'s lower bounds to j's words, in their order.
  void query_rows(std::size_t j, const std::uint32_t* words, std::size_t n,
                  const float** rows) const {
    const std::uint64_t c0 = batch_.cols_indptr[j];
    for (std::size_t p = 0; p < n; ++p) rows[p] = row(words[p]) + c0;
  }
  // The same for a document's words, in the document's order.
  void doc_rows(std::size_t j, std::size_t doc, const float** rows) const {
    const auto words = index_.doc_words(doc);
    query_rows(j, words.data(), words.size(), rows);
  }

  // Query j's word t (its position in the query) against vocabulary word u: the squared
  // distance as reported, and an upper bound of it from its kept lower bound `lo`.
  float exact(std::size_t u, std::size_t j, std::size_t t) const {
    return tiles_.exact(u, column(j, t));
  }
  float upper(std::size_t u, std::size_t j, std::size_t t, float lo) const {
    return lo + 2.0f * tiles_.half_width(u, column(j, t));
  }
  // limit[t] = min(limit[t], upper(u, j, t, row(u)[t of j])) for each of query j's words.
  void upper_min_into(std::size_t u, std::size_t j, float* limit) const {
    const std::uint64_t c0 = batch_.cols_indptr[j];
    cpu::kernels().upper_min_into(
        limit, row(u) + c0, tiles_.row_terms(u),
        {col_sq_.data() + c0, col_a_.data() + c0, col_b_.data() + c0, col_c_.data() + c0},
        batch_.cols_indptr[j + 1] - c0);
  }

  // Phase 1 hands over tile rows [u0, u0 + rows) against every batch word: lo's column w
  // (stride `tile_stride`) holds batch word w's bounds.
  void store(std::size_t u0, std::size_t rows, const float* lo, std::size_t tile_stride);

  // Replaces every kept bound by the exact squared distance (exact()'s bits, each batch word's
  // once per vocabulary word): a lower bound still, and the minimum over a document's words of
  // it is then D2's word term itself. What every document's D2 costs less as than refining each
  // one (Rows::exact). The rows lose their padding: a gather over random words reads fewer
  // lines (Set 1, one 5-word query: 20 bytes a word instead of 64, 9 MB instead of 29).
  void make_exact();

 private:
  static std::size_t padded(std::size_t columns) {
    return columns < 16 ? columns : (columns + 15) / 16 * 16;
  }
  std::size_t column(std::size_t j, std::size_t t) const {
    return batch_.cols[batch_.cols_indptr[j] + t];
  }

  const Index& index_;
  const BatchWords& batch_;
  const Phase1Tiles& tiles_;
  std::size_t stride_;
  LargeArray<float> data_;
  std::vector<float> col_sq_, col_a_, col_b_, col_c_;  // per position in cols: the bound's terms
};

}  // namespace lcrwmd
