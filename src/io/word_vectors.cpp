// The sources of word vectors (lcrwmd/word_vectors.h): opening one, and what every source shares.
#include "lcrwmd/word_vectors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "lcrwmd/embeddings.h"
#include "lcrwmd/fasttext.h"

namespace lcrwmd {

std::unique_ptr<WordVectors> open_word_vectors(const std::string& path, const WordSet* only) {
  if (FastTextModel::is_model(path)) return FastTextModel::load(path);
  return std::make_unique<Embeddings>(Embeddings::load(path, only));
}

Embeddings select_vectors(const WordVectors& source, const WordSet& words) {
  std::vector<std::string_view> sorted(words.begin(), words.end());
  std::sort(sorted.begin(), sorted.end());  // the table's order: the same for the same words
  const std::size_t dim = source.dim();
  std::vector<std::string> kept;
  std::vector<float> vectors;
  std::vector<float> v(dim);
  for (const std::string_view w : sorted) {
    if (!source.lookup(w, v.data())) continue;
    kept.emplace_back(w);
    vectors.insert(vectors.end(), v.begin(), v.end());
  }
  return Embeddings(std::move(kept), std::move(vectors), dim);
}

void to_unit_length(float* v, std::size_t dim) {
  double sq = 0;
  for (std::size_t k = 0; k < dim; ++k) sq += static_cast<double>(v[k]) * v[k];
  if (sq == 0) return;
  const double norm = std::sqrt(sq);
  for (std::size_t k = 0; k < dim; ++k) v[k] = static_cast<float>(v[k] / norm);
}

bool Embeddings::lookup(std::string_view word, float* out) const {
  const auto e = find(word);
  if (!e) return false;
  std::memcpy(out, vector(*e), dim_ * sizeof(float));
  return true;
}

}  // namespace lcrwmd
