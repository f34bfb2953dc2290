#include "methods/lc_rwmd/word_distance_cache.h"

#include <algorithm>

#include "cpu/simd.h"

namespace lcrwmd {

WordDistanceCache::WordDistanceCache(const Index& index, const BatchWords& batch,
                                     const Phase1Tiles& tiles)
    : index_(index), batch_(batch), tiles_(tiles), stride_(padded(batch.cols.size())) {
  data_.resize(index.vocab_size() * stride_);
  for (std::uint32_t c : batch_.cols) {
    const cpu::BoundTerms t = tiles_.column_terms(c);
    col_sq_.push_back(t.sq);
    col_a_.push_back(t.a);
    col_b_.push_back(t.b);
    col_c_.push_back(t.c);
  }
}

void WordDistanceCache::make_exact() {
  const std::size_t v = index_.vocab_size(), w = batch_.words.size(), m = index_.dim();
  const std::size_t n_cols = batch_.cols.size();
  constexpr std::size_t kRows = 64;  // a block of vocabulary vectors stays in L2 for every word
  const std::size_t n_blocks = (v + kRows - 1) / kRows;
  // Rows written from the vectors alone, packed over the bounds: no block reads what another
  // overwrites.
#pragma omp parallel
  {
    std::vector<const float*> rows(kRows);
    std::vector<float> found(w * kRows);
#pragma omp for schedule(static)
    for (std::size_t b = 0; b < n_blocks; ++b) {
      const std::size_t u0 = b * kRows, n = std::min(kRows, v - u0);
      for (std::size_t r = 0; r < n; ++r) rows[r] = index_.vector(u0 + r);
      // sq_dist(vector(u), word) as Phase1Tiles::exact computes it, several rows at a time.
      for (std::size_t c = 0; c < w; ++c)
        cpu::kernels().sq_dist_batch(rows.data(), batch_.vectors.data() + c * m, n, m,
                                     found.data() + c * kRows);
      for (std::size_t r = 0; r < n; ++r) {
        float* out = data_.data() + (u0 + r) * n_cols;
        for (std::size_t p = 0; p < n_cols; ++p) out[p] = found[batch_.cols[p] * kRows + r];
      }
    }
  }
  stride_ = n_cols;
}

void WordDistanceCache::store(std::size_t u0, std::size_t rows, const float* lo,
                              std::size_t tile_stride) {
  cpu::kernels().columns_to_rows(lo, tile_stride, rows, batch_.cols.data(), batch_.cols.size(),
                                 data_.data() + u0 * stride(), stride());
}

}  // namespace lcrwmd
