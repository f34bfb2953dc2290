#pragma once
// Word embeddings: a vocabulary of distinct words and one float32 vector per word (a
// WordVectors that answers for the words of its table only).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/string_map.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {

class MappedFile;  // io/mapped_file.h

class Embeddings : public WordVectors {
 public:
  // Reads word2vec binary, or word2vec / GloVe / fastText text with or without the
  // "count dim" header; the format is detected from the content. Throws Error naming the
  // file and line (text) or entry (binary) on truncation, a wrong number of values,
  // non-numeric, NaN or infinite values, or an empty file. A word seen twice keeps its
  // first vector; the later copies are counted in duplicates().
  //
  // With `only`, just those words are kept, in the file's order; the entries of the others are
  // checked for their shape (a word and dim values) but their values are not parsed: memory in
  // proportion to the words wanted, however large the file (it is read once, front to back,
  // and let go of as it is). An indexed file (write_indexed) reads only the wanted entries.
  static Embeddings load(const std::string& path, const WordSet* only = nullptr);
  // Writes `input` (any format load() reads) as an indexed embeddings file, read front to back
  // in memory proportional to its words: later loads of a few words (load()'s `only`) read
  // only their pages. Returns the number of words written (duplicates skipped).
  static std::size_t write_indexed(const std::string& input, const std::string& output);

  Embeddings() = default;
  // From memory: words.size() * dim values, row-major. Duplicate words: first wins.
  Embeddings(std::vector<std::string> words, std::vector<float> vectors, std::size_t dim);

  std::size_t size() const { return words_.size(); }
  std::size_t dim() const override { return dim_; }
  const std::string& word(std::size_t i) const { return words_[i]; }
  const float* vector(std::size_t i) const { return vectors_.data() + i * dim_; }
  const std::vector<float>& data() const { return vectors_; }
  std::optional<std::uint32_t> find(std::string_view word) const;
  bool lookup(std::string_view word, float* out) const override;

  std::size_t duplicates() const { return duplicates_; }
  // Entries in the file it was read from (more than size() where load() kept only some).
  std::size_t file_words() const { return file_words_; }
  // "word2vec-binary", "text" (with or without header) or "indexed", for reports.
  const std::string& format() const override { return format_; }
  const std::string& source() const override { return source_; }

 private:
  friend Embeddings load_indexed_embeddings(const MappedFile& file, const WordSet* only);
  void add(std::string_view word, const float* values);

  std::vector<std::string> words_;
  std::vector<float> vectors_;
  std::size_t dim_ = 0;
  std::size_t duplicates_ = 0;
  std::size_t file_words_ = 0;
  std::string format_;
  std::string source_;
  StringMap<std::uint32_t> lookup_;
};

}  // namespace lcrwmd
