#pragma once
// An index file's image, apart from the Index that reads it (core/): the bytes written from
// IndexData, and the typed views of a checked image wherever it lies in memory (a mapped file,
// bytes received or unpickled).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/index_format.h"
#include "io/posting_codec.h"
#include "lcrwmd/index.h"

namespace lcrwmd::io {

// Strings i = bytes[offsets[i], offsets[i + 1]).
struct StringTable {
  const std::uint64_t* offsets = nullptr;
  const char* bytes = nullptr;
  std::string_view operator[](std::size_t i) const {
    return {bytes + offsets[i], offsets[i + 1] - offsets[i]};
  }
};

// Views into an image, valid while it is.
struct IndexView {
  std::size_t n_docs = 0, vocab_size = 0, dim = 0, nnz = 0, n_stopwords = 0;
  Weighting weighting = Weighting::tf;
  bool has_text = false;
  bool unit_vectors = false;
  std::uint32_t tokenizer_version = 0;
  std::uint64_t embeddings_fingerprint = 0;
  std::size_t idf_docs = 0;  // the documents doc_freq counts
  const std::uint64_t* indptr = nullptr;
  const std::uint32_t* indices = nullptr;
  const float* values = nullptr;
  const float* vectors = nullptr;
  const float* sq_norms = nullptr;
  const std::uint32_t* doc_freq = nullptr;
  StringTable vocab, ids, labels, texts, stopwords, terms;
  std::size_t n_terms = 0;
  std::uint64_t idf_length = 0;  // of idf_docs
  const std::uint32_t* term_doc_freq = nullptr;
  const std::uint64_t* posting_indptr = nullptr;
  // Version 5: each term's first block (terms + 1), the blocks, their bytes (io/posting_codec.h).
  const std::uint64_t* posting_block_indptr = nullptr;
  const StoredBlock* posting_blocks = nullptr;
  const std::uint8_t* posting_bytes = nullptr;
  // Versions 3 and 4: each posting's document and count.
  const std::uint32_t* posting_docs = nullptr;
  const std::uint32_t* posting_counts = nullptr;
  const std::uint32_t* doc_lengths = nullptr;
  std::size_t lexical_bytes = 0;  // the file's bytes of postings and documents' lengths
  std::string_view metric;        // its bytes (lcrwmd/metric.h); empty: built without one
};

// The bytes of the index file of `data`; and that file written atomically (temporary, then
// rename). An Error where the data is inconsistent. Version: the current format, or 4 (its
// postings uncompressed: what tests of older files and the format's benchmark write).
std::vector<char> index_image(const IndexData& data, std::uint32_t version = format::kVersion);
void write_index_file(const IndexData& data, const std::string& path,
                      std::uint32_t version = format::kVersion);

// Checks an image (its header and layout; verify: also its payload checksum, every
// document's word ids and every term's postings) and returns its views. Errors name `name` (the
// file).
IndexView read_index_image(const char* base, std::size_t size, const std::string& name,
                           bool verify);

// A document's text as the image packs it (its length, then zlib's deflate of it); nullopt
// where the bytes are damaged.
std::optional<std::string> unpack_text(std::string_view packed);

}  // namespace lcrwmd::io
