#include "methods/word_distance_cache.h"

#include <algorithm>
#include <numeric>

namespace lcrwmd {

WordDistanceCache::WordDistanceCache(const Index& index, const BatchWords& batch,
                                     const Phase1Tiles& tiles)
    : index_(index), batch_(batch), tiles_(tiles) {
  data_.resize(index.vocab_size() * stride());
  by_column_.resize(stride());
  std::iota(by_column_.begin(), by_column_.end(), 0u);
  std::stable_sort(by_column_.begin(), by_column_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return batch_.cols[a] < batch_.cols[b];
  });
  for (std::uint32_t c : batch_.cols) {
    const cpu::BoundTerms t = tiles_.column_terms(c);
    col_sq_.push_back(t.sq);
    col_a_.push_back(t.a);
    col_b_.push_back(t.b);
    col_c_.push_back(t.c);
  }
}

void WordDistanceCache::store(std::size_t u0, std::size_t rows, std::size_t w0, std::size_t wc,
                              const float* lo, std::size_t tile_stride) {
  auto column_below = [&](std::uint32_t p, std::size_t c) { return batch_.cols[p] < c; };
  const auto first = std::lower_bound(by_column_.begin(), by_column_.end(), w0, column_below);
  const auto last = std::lower_bound(first, by_column_.end(), w0 + wc, column_below);
  const std::size_t S = stride();
  // A transpose in blocks of 16 rows: the destination rows of a block stay in L1.
  constexpr std::size_t kBlock = 16;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock) {
    const std::size_t rn = std::min(kBlock, rows - r0);
    float* dst = data_.data() + (u0 + r0) * S;
    for (auto it = first; it != last; ++it) {
      const float* src = lo + std::size_t{batch_.cols[*it]} * tile_stride + r0;
      for (std::size_t r = 0; r < rn; ++r) dst[r * S + *it] = src[r];
    }
  }
}

}  // namespace lcrwmd
