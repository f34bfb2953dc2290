#include "core/batch_words.h"

#include <algorithm>

#include "cpu/distance_kernels.h"

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

}  // namespace lcrwmd
