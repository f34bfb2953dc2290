#pragma once
// Tokenizer and stop words. The tokenizer is fixed so anyone can reproduce our histograms:
// a token is a maximal run of ASCII letters, digits, apostrophes and bytes >= 0x80; ASCII
// letters are lowercased; leading and trailing apostrophes are stripped; empty tokens dropped.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/string_map.h"

namespace lcrwmd {

// The tokenizer's version, recorded in every index: a query is tokenized as its documents were.
inline constexpr std::uint32_t kTokenizerVersion = 1;

// Calls emit(std::string_view token) for every token of text, in order. The view points into
// a scratch buffer valid only during the call.
template <typename Emit>
void for_each_token(std::string_view text, std::string& scratch, Emit&& emit);

std::vector<std::string> tokenize(std::string_view text);

// The distinct tokens of documents (a pretokenized one's tokens as given): the words whose
// vectors an index of them can need (Embeddings::load's `only`).
struct RawDocument;  // lcrwmd/corpus.h
WordSet distinct_tokens(const std::vector<RawDocument>& docs);

class StopWords {
 public:
  StopWords() = default;
  // One word per line; blank lines ignored; words are lowercased like tokens.
  static StopWords load(const std::string& path);
  void add(std::string_view word);
  bool contains(std::string_view token) const { return words_.find(token) != words_.end(); }
  std::size_t size() const { return words_.size(); }
  bool empty() const { return words_.empty(); }
  // The words, sorted (what an index records).
  std::vector<std::string> sorted() const;
  bool operator==(const StopWords& other) const { return words_ == other.words_; }

 private:
  WordSet words_;
};

// ---- implementation of the template ----
inline bool is_token_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' ||
         c >= 0x80;
}

template <typename Emit>
void for_each_token(std::string_view text, std::string& scratch, Emit&& emit) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && !is_token_byte(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < n && is_token_byte(static_cast<unsigned char>(text[j]))) ++j;
    std::size_t b = i, e = j;
    while (b < e && text[b] == '\'') ++b;
    while (e > b && text[e - 1] == '\'') --e;
    if (e > b) {
      scratch.assign(text.data() + b, e - b);
      for (char& c : scratch)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      emit(std::string_view(scratch));
    }
    i = j;
  }
}

}  // namespace lcrwmd
