#pragma once
// The query words of a batch as phase-1 columns, laid out the same for every backend: the
// distinct words (ascending ids; a word shared by several queries is one column), their
// vectors and squared norms, and for each query the columns of its words.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"

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
};

}  // namespace lcrwmd
