#pragma once
// The query words of a batch as phase-1 columns, laid out the same for every backend: the
// distinct words (ascending ids; a word shared by several queries is one column), their
// vectors and squared norms, and for each query the columns of its words.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

struct BatchWords {
  // Queries [begin, end) of q.
  BatchWords(const Index& index, const QuerySet& q, std::size_t begin, std::size_t end);

  std::vector<std::uint32_t> words;    // distinct query words, ascending
  std::vector<float> vectors;          // words.size() x dim
  std::vector<float> norms;            // squared
  std::vector<std::int64_t> vocab_id;  // index word id, or -1 for a word the index lacks
  // Query j's words are columns cols[cols_indptr[j] .. cols_indptr[j + 1]), ascending, in the
  // order of its words (so position p pairs with the query's weight p).
  std::vector<std::uint64_t> cols_indptr;
  std::vector<std::uint32_t> cols;

  // Phase 1's tile shape: vocabulary rows x batch words, from `opt` or cache-friendly defaults
  // (512 x 512), the words capped at the batch's.
  struct TileShape {
    std::size_t rows, words;
  };
  TileShape tile_shape(const CpuOptions& opt) const;

  // Phase 1's tile: squared distances of vocabulary rows [u0, u0 + rows) to columns
  // [w0, w0 + wc), into dst column-major (row stride `rows`), by one SGEMM of -2 e.t plus the
  // norms, recomputed directly where they cancel, exactly 0 for a query word against itself.
  void tile_sq_distances(const Index& index, std::size_t u0, std::size_t rows, std::size_t w0,
                         std::size_t wc, float* dst) const;
};

}  // namespace lcrwmd
