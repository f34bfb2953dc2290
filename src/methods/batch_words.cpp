#include "methods/batch_words.h"

#include <cblas.h>

#include <algorithm>

#include "core/numerics.h"
#include "cpu/distance_kernels.h"
#include "cpu/simd.h"

namespace lcrwmd {

BatchWords::BatchWords(const Index& index, const QuerySet& q, std::size_t begin, std::size_t end) {
  const std::size_t m = index.dim(), v = index.vocab_size();
  words.assign(q.words.begin() + static_cast<std::ptrdiff_t>(q.indptr[begin]),
               q.words.begin() + static_cast<std::ptrdiff_t>(q.indptr[end]));
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  const std::size_t w = words.size();
  vectors.resize(w * m);
  norms.resize(w);
  vocab_id.resize(w);
  for (std::size_t c = 0; c < w; ++c) {
    const std::uint32_t u = words[c];
    const float* vec = query_word_vector(index, q, u);
    std::copy(vec, vec + m, vectors.begin() + static_cast<std::ptrdiff_t>(c * m));
    norms[c] = u < v ? index.sq_norms()[u] : cpu::sq_norm(vec, m);
    vocab_id[c] = u < v ? static_cast<std::int64_t>(u) : -1;
  }
  // Ascending within each query, since both its words and `words` are sorted.
  cols_indptr.push_back(0);
  for (std::size_t j = begin; j < end; ++j) {
    for (std::uint64_t p = q.indptr[j]; p < q.indptr[j + 1]; ++p)
      cols.push_back(static_cast<std::uint32_t>(
          std::lower_bound(words.begin(), words.end(), q.words[p]) - words.begin()));
    cols_indptr.push_back(cols.size());
  }
}

BatchWords::TileShape BatchWords::tile_shape(const CpuOptions& opt) const {
  constexpr std::size_t kDefaultRows = 512, kDefaultWords = 512;
  const std::size_t asked = opt.tile_words ? opt.tile_words : kDefaultWords;
  return {opt.tile_rows ? opt.tile_rows : kDefaultRows,
          std::min(asked, std::max<std::size_t>(words.size(), 1))};
}

void BatchWords::tile_sq_distances(const Index& index, std::size_t u0, std::size_t rows,
                                   std::size_t w0, std::size_t wc, float* dst) const {
  using numerics::kPhase1RecomputeBelow;
  const std::size_t m = index.dim();
  const float* e = index.vector(u0);
  const float* en = index.sq_norms() + u0;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(wc), static_cast<int>(rows),
              static_cast<int>(m), -2.0f, vectors.data() + w0 * m, static_cast<int>(m), e,
              static_cast<int>(m), 0.0f, dst, static_cast<int>(rows));
  const cpu::Kernels& k = cpu::kernels();
  for (std::size_t c = 0; c < wc; ++c) {
    float* col = dst + c * rows;
    const float tn = norms[w0 + c];
    if (k.finish_sq_distances(col, en, tn, rows, kPhase1RecomputeBelow) > 0)
      for (std::size_t r = 0; r < rows; ++r)
        if (col[r] < kPhase1RecomputeBelow * (en[r] + tn))
          col[r] = k.sq_dist(e + r * m, vectors.data() + (w0 + c) * m, m);
    // The query word itself: exactly 0, so a document is at distance 0 from itself.
    const std::int64_t id = vocab_id[w0 + c];
    if (id >= static_cast<std::int64_t>(u0) && id < static_cast<std::int64_t>(u0 + rows))
      col[id - static_cast<std::int64_t>(u0)] = 0.0f;
  }
}

}  // namespace lcrwmd
