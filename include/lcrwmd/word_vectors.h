#pragma once
// Where a word's vector comes from, behind one interface: a table of words read from an
// embeddings file (Embeddings: word2vec, GloVe or fastText text, an indexed file) or a fastText
// model (.bin, lcrwmd/fasttext.h), which also gives a vector to a word it never saw, from the
// word's character n-grams. Builds take the vectors of their documents' words from it
// (select_vectors); queries look up the words their index does not hold (lcrwmd/query.h).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "lcrwmd/string_map.h"

namespace lcrwmd {

class Embeddings;  // lcrwmd/embeddings.h

class WordVectors {
 public:
  virtual ~WordVectors() = default;
  virtual std::size_t dim() const = 0;
  // What it is, for reports and errors: "word2vec-binary", "text", "indexed", "memory",
  // "fasttext".
  virtual const std::string& format() const = 0;
  // The file it was read from ("memory" for vectors made in memory).
  virtual const std::string& source() const = 0;
  // Writes the vector of `word` (dim() floats) to out; false where it has none.
  virtual bool lookup(std::string_view word, float* out) const = 0;
  // Whether it gives a vector to every word, seen or not (a model with character n-grams).
  virtual bool covers_every_word() const { return false; }

 protected:
  WordVectors() = default;
  WordVectors(const WordVectors&) = default;
  WordVectors& operator=(const WordVectors&) = default;
  WordVectors(WordVectors&&) = default;
  WordVectors& operator=(WordVectors&&) = default;
};

// The source at `path`: a fastText model where the file is one (told by its content), else any
// embeddings file Embeddings::load reads (with `only`, just those words are read from it; a
// model is read whole, since it answers any word).
std::unique_ptr<WordVectors> open_word_vectors(const std::string& path,
                                               const WordSet* only = nullptr);

// The vectors `source` has for `words`, as a table (what a build takes).
Embeddings select_vectors(const WordVectors& source, const WordSet& words);

// v scaled to length 1, computed in double (one rounding per value, the same on every machine);
// a zero vector stays zero. What an index built with unit-length vectors applies to every
// vector, its queries' included.
void to_unit_length(float* v, std::size_t dim);

}  // namespace lcrwmd
