#include "methods/lc_rwmd/tile_minima.h"

#include <algorithm>
#include <limits>

namespace lcrwmd {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
}  // namespace

std::size_t TileMinima::find(Phase1Tiles::Workspace& ws, std::size_t u0, std::size_t rows,
                             const cpu::Least3& least, float* best) {
  const std::size_t Q = batch_.cols_indptr.size() - 1, R = tiles_.rows(), w = batch_.words.size(),
                    m = index_.dim();
  const cpu::Kernels& k = cpu::kernels();
  word_.resize(Q * R);
  // A query with no words has no nearest one: +inf, as the minimum over none.
  const auto has_words = [&](std::size_t j) {
    return batch_.cols_indptr[j] < batch_.cols_indptr[j + 1];
  };
  by_word_.assign(w + 1, 0);
  for (std::size_t j = 0; j < Q; ++j)
    for (std::size_t r = 0; r < rows; ++r) {
      if (!has_words(j)) {
        best[j * R + r] = kInf;
        continue;
      }
      const std::uint32_t c = batch_.cols[least.a1[j * R + r]];
      word_[j * R + r] = c;
      ++by_word_[c + 1];
    }
  for (std::size_t c = 0; c < w; ++c) by_word_[c + 1] += by_word_[c];
  // The pairs grouped by word; by_word_[c] then ends word c's run.
  pending_.resize(by_word_[w]);
  for (std::size_t j = 0; j < Q; ++j)
    for (std::size_t r = 0; r < rows && has_words(j); ++r)
      pending_[by_word_[word_[j * R + r]]++] = {static_cast<std::uint32_t>(j * R + r),
                                                static_cast<std::uint32_t>(r)};
  // Each run of one word: its distinct rows recomputed at once (queries of a batch that share
  // words often share a row's least one too), then every pair of the run served.
  vectors_.resize(rows);
  found_.resize(rows);
  slot_.assign(rows, kNoSlot);
  std::size_t recomputed = 0;
  for (std::size_t c = 0, i = 0; c < w; ++c) {
    const std::size_t end = by_word_[c];
    if (i == end) continue;
    std::size_t distinct = 0;
    for (std::size_t e = i; e < end; ++e) {
      const std::uint32_t r = pending_[e].row;
      if (slot_[r] != kNoSlot) continue;
      slot_[r] = static_cast<std::uint32_t>(distinct);
      vectors_[distinct++] = index_.vector(u0 + r);
    }
    k.sq_dist_batch(vectors_.data(), batch_.vectors.data() + c * m, distinct, m, found_.data());
    recomputed += distinct;
    for (std::size_t e = i; e < end; ++e) best[pending_[e].pair] = found_[slot_[pending_[e].row]];
    for (std::size_t e = i; e < end; ++e) slot_[pending_[e].row] = kNoSlot;
    i = end;
  }
  for (std::size_t j = 0; j < Q; ++j)
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t e = j * R + r;
      if (!has_words(j) || !(least.v2[e] <= best[e])) continue;
      best[e] = std::min(best[e], tiles_.exact(u0 + r, batch_.cols[least.a2[e]]));
      ++recomputed;
      if (!(least.v3[e] <= best[e])) continue;
      const cpu::BoundTerms row = tiles_.row_terms(u0 + r);
      for (std::uint64_t p = batch_.cols_indptr[j]; p < batch_.cols_indptr[j + 1]; ++p) {
        const std::uint32_t c = batch_.cols[p];
        if (p == least.a1[e] || p == least.a2[e] || !(tiles_.lower(ws, row, r, c) <= best[e]))
          continue;
        best[e] = std::min(best[e], tiles_.exact(u0 + r, c));
        ++recomputed;
      }
    }
  return recomputed;
}

}  // namespace lcrwmd
