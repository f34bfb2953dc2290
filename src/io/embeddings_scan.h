#pragma once
// The embeddings readers' common parts (io/embeddings_reader.cpp, io/embeddings_indexed.cpp):
// a word2vec binary or text file read entry by entry into a sink, and the indexed format.
#include <cstddef>
#include <string>
#include <string_view>

#include "io/mapped_file.h"
#include "lcrwmd/embeddings.h"

namespace lcrwmd {

// Where scan_embeddings puts what it reads.
struct EmbeddingsSink {
  virtual ~EmbeddingsSink() = default;
  // Whether a word's entry is wanted: the others are passed over unparsed.
  virtual bool wanted(std::string_view word) const = 0;
  // Once, before the first entry: the format's name, the dimension and a bound on the entries
  // (no more than the file's bytes can hold).
  virtual void begin(std::string_view format, std::size_t dim, std::size_t count) = 0;
  // Each wanted entry in file order; values (dim floats, checked finite) live for the call.
  virtual void entry(std::string_view word, const float* values) = 0;
};

// Whether a vector's squared norm stays far from overflowing: the distance kernels square and
// add the components.
bool magnitude_ok(const float* v, std::size_t dim);

// Reads a word2vec binary or word2vec / GloVe / fastText text file front to back (letting go
// of the pages it has read), with Embeddings::load's checks and errors; returns the number of
// entries in the file.
std::size_t scan_embeddings(const MappedFile& file, EmbeddingsSink& sink);

// The indexed format (`lcrwmd embeddings`): the vectors, the words and a hash table over them,
// memory-mapped, so that a load of a few words reads a few pages.
bool is_indexed_embeddings(const MappedFile& file);
Embeddings load_indexed_embeddings(const MappedFile& file, const WordSet* only);

}  // namespace lcrwmd
