#include "methods/word_distance_cache.h"

#include <algorithm>

#include "cpu/simd.h"

namespace lcrwmd {

WordDistanceCache::WordDistanceCache(const Index& index, const BatchWords& batch,
                                     const Phase1Tiles& tiles)
    : index_(index), batch_(batch), tiles_(tiles) {
  data_.resize(index.vocab_size() * stride());
  for (std::uint32_t c : batch_.cols) {
    const cpu::BoundTerms t = tiles_.column_terms(c);
    col_sq_.push_back(t.sq);
    col_a_.push_back(t.a);
    col_b_.push_back(t.b);
    col_c_.push_back(t.c);
  }
}

void WordDistanceCache::store(std::size_t u0, std::size_t rows, const float* lo,
                              std::size_t tile_stride) {
  cpu::kernels().columns_to_rows(lo, tile_stride, rows, batch_.cols.data(), batch_.cols.size(),
                                 data_.data() + u0 * stride(), stride());
}

}  // namespace lcrwmd
