#pragma once
// Tokenizer and stop words. The tokenizer is fixed, and versioned, so anyone can reproduce our
// histograms; an index records the version its documents were read with, and its queries are
// read with the same one.
//
// Version 2 (what `lcrwmd build` writes), for text as people write it (UTF-8):
//   - the text is normalised to NFKC and case-folded (utf8proc): "Über" and "über", "ﬁ" and
//     "fi", full-width "Ｆ" and "f" read alike;
//   - a token is a maximal run of letters, marks and digits of any script, with apostrophes
//     inside it: U+2019 and U+2018 (curly), U+02BC and ' all read as ', so "didn’t" is
//     "didn't";
//   - every other character separates tokens: spaces, punctuation, quotes of every kind,
//     dashes, symbols ("well-known" is "well" and "known"; “comeback” is "comeback");
//   - apostrophes at either end are dropped ("players'" is "players"), then a possessive's
//     "'s" ("federer's" is "federer"); other contractions keep their apostrophe, as word
//     embeddings spell them ("don't");
//   - text that is not valid UTF-8 is an Error.
// Version 1 (indexes built before it): a maximal run of ASCII letters, digits, apostrophes and
// bytes >= 0x80; ASCII letters lowercased; apostrophes at either end stripped.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/string_map.h"

namespace lcrwmd {

// The version new indexes record (and read their queries with), and the oldest one still read.
inline constexpr std::uint32_t kTokenizerVersion = 2;
inline constexpr std::uint32_t kOldestTokenizerVersion = 1;

// Calls emit(std::string_view token) for every token of text, in order, as tokenizer `version`
// reads it. The view points into a scratch buffer valid only during the call. Version 2: an
// Error where text is not valid UTF-8.
template <typename Emit>
void for_each_token(std::string_view text, std::string& scratch, Emit&& emit,
                    std::uint32_t version = kTokenizerVersion);

std::vector<std::string> tokenize(std::string_view text, std::uint32_t version = kTokenizerVersion);

// An Error unless `version` is one this build reads, naming what to do.
void check_tokenizer_version(std::uint32_t version);

// The distinct tokens of documents (a pretokenized one's tokens as given): the words whose
// vectors an index of them can need (Embeddings::load's `only`).
struct RawDocument;  // lcrwmd/corpus.h
WordSet distinct_tokens(const std::vector<RawDocument>& docs,
                        std::uint32_t version = kTokenizerVersion);

class StopWords {
 public:
  StopWords() = default;
  // One word per line; blank lines ignored; each read as a token of tokenizer `version` (the
  // index's) reads it.
  static StopWords load(const std::string& path, std::uint32_t version = kTokenizerVersion);
  void add(std::string_view word, std::uint32_t version = kTokenizerVersion);
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
namespace detail {
// Version 2, with the tokens handed to sink(ctx, token).
void for_each_token_v2(std::string_view text, std::string& scratch,
                       void (*sink)(void*, std::string_view), void* ctx);
}  // namespace detail

inline bool is_token_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' ||
         c >= 0x80;
}

template <typename Emit>
void for_each_token(std::string_view text, std::string& scratch, Emit&& emit,
                    std::uint32_t version) {
  if (version != 1) {
    detail::for_each_token_v2(
        text, scratch,
        [](void* ctx, std::string_view t) {
          (*static_cast<std::remove_reference_t<Emit>*>(ctx))(t);
        },
        &emit);
    return;
  }
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
