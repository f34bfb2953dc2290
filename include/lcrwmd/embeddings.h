#pragma once
// Word embeddings: a vocabulary of distinct words and one float32 vector per word.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/string_map.h"

namespace lcrwmd {

class Embeddings {
 public:
  // Reads word2vec binary, or word2vec / GloVe / fastText text with or without the
  // "count dim" header; the format is detected from the content. Throws Error naming the
  // file and line (text) or entry (binary) on truncation, a wrong number of values,
  // non-numeric, NaN or infinite values, or an empty file. A word seen twice keeps its
  // first vector; the later copies are counted in duplicates().
  static Embeddings load(const std::string& path);

  Embeddings() = default;
  // From memory: words.size() * dim values, row-major. Duplicate words: first wins.
  Embeddings(std::vector<std::string> words, std::vector<float> vectors, std::size_t dim);

  std::size_t size() const { return words_.size(); }
  std::size_t dim() const { return dim_; }
  const std::string& word(std::size_t i) const { return words_[i]; }
  const float* vector(std::size_t i) const { return vectors_.data() + i * dim_; }
  const std::vector<float>& data() const { return vectors_; }
  std::optional<std::uint32_t> find(std::string_view word) const;

  std::size_t duplicates() const { return duplicates_; }
  // "word2vec-binary" or "text" (with or without header), for reports.
  const std::string& format() const { return format_; }
  const std::string& source() const { return source_; }

 private:
  void add(std::string_view word, const float* values);

  std::vector<std::string> words_;
  std::vector<float> vectors_;
  std::size_t dim_ = 0;
  std::size_t duplicates_ = 0;
  std::string format_;
  std::string source_;
  StringMap<std::uint32_t> lookup_;
};

}  // namespace lcrwmd
