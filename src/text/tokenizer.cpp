// The tokenizer's version 2 (lcrwmd/text.h): NFKC and case folding by utf8proc, tokens of any
// script, apostrophes of every spelling read as one, possessives dropped.
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>

#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/text.h"

namespace lcrwmd {
namespace {

bool is_apostrophe(utf8proc_int32_t c) {
  return c == '\'' || c == 0x2019 || c == 0x2018 || c == 0x02BC;
}

bool is_word_char(utf8proc_int32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// A token as read (its apostrophes already '), trimmed of apostrophes at either end and of a
// possessive's 's; empty tokens are not emitted.
void finish(std::string& token, void (*sink)(void*, std::string_view), void* ctx) {
  std::size_t b = 0, e = token.size();
  while (b < e && token[b] == '\'') ++b;
  while (e > b && token[e - 1] == '\'') --e;
  if (e - b > 2 && token[e - 2] == '\'' && token[e - 1] == 's') e -= 2;
  if (e > b) sink(ctx, std::string_view(token).substr(b, e - b));
}

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

}  // namespace

namespace detail {

void for_each_token_v2(std::string_view text, std::string& scratch,
                       void (*sink)(void*, std::string_view), void* ctx) {
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  // ASCII is its own NFKC; its case folding is lowercasing: no copy of the text needed.
  std::unique_ptr<utf8proc_uint8_t, FreeDeleter> mapped;
  const auto* s = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto n = static_cast<utf8proc_ssize_t>(text.size());
  if (!ascii) {
    utf8proc_uint8_t* out = nullptr;
    const utf8proc_ssize_t len =
        utf8proc_map(s, n, &out,
                     static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE |
                                                    UTF8PROC_COMPAT | UTF8PROC_CASEFOLD));
    if (len < 0) {
      // Where: the first byte that does not decode.
      utf8proc_ssize_t at = 0;
      utf8proc_int32_t c;
      while (at < n) {
        const utf8proc_ssize_t step = utf8proc_iterate(s + at, n - at, &c);
        if (step < 0) break;
        at += step;
      }
      throw Error("not valid UTF-8 (at byte " + std::to_string(at) + ")");
    }
    mapped.reset(out);
    s = out;
    n = len;
  }
  scratch.clear();
  utf8proc_ssize_t at = 0;
  while (at < n) {
    utf8proc_int32_t c;
    const utf8proc_ssize_t step = ascii ? 1 : utf8proc_iterate(s + at, n - at, &c);
    if (ascii) c = s[at];
    if (is_apostrophe(c)) {
      scratch.push_back('\'');
    } else if (is_word_char(c)) {
      if (c >= 'A' && c <= 'Z') {
        scratch.push_back(static_cast<char>(c - 'A' + 'a'));
      } else {
        scratch.append(reinterpret_cast<const char*>(s + at), static_cast<std::size_t>(step));
      }
    } else if (!scratch.empty()) {
      finish(scratch, sink, ctx);
      scratch.clear();
    }
    at += step;
  }
  if (!scratch.empty()) finish(scratch, sink, ctx);
}

}  // namespace detail

void check_tokenizer_version(std::uint32_t version) {
  if (version < kOldestTokenizerVersion || version > kTokenizerVersion)
    throw Error("tokenizer version " + std::to_string(version) + ": this build reads versions " +
                std::to_string(kOldestTokenizerVersion) + " to " +
                std::to_string(kTokenizerVersion) +
                (version > kTokenizerVersion ? ": use a newer lcrwmd"
                                             : ": rebuild the index with `lcrwmd build`"));
}

std::vector<std::string> tokenize(std::string_view text, std::uint32_t version) {
  check_tokenizer_version(version);
  std::vector<std::string> out;
  std::string scratch;
  for_each_token(
      text, scratch, [&](std::string_view t) { out.emplace_back(t); }, version);
  return out;
}

WordSet distinct_tokens(const std::vector<RawDocument>& docs, std::uint32_t version) {
  // Blocks read in parallel, each into its own set, merged in order: the first error in the
  // documents' order is the one thrown, as when read one after another.
  constexpr std::size_t kBlock = 1024;
  const std::size_t blocks = (docs.size() + kBlock - 1) / kBlock;
  std::vector<WordSet> sets(blocks);
  std::vector<std::exception_ptr> errors(blocks);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t b = 0; b < blocks; ++b) {
    WordSet& out = sets[b];
    std::string scratch;
    try {
      for (std::size_t i = b * kBlock; i < std::min(docs.size(), (b + 1) * kBlock); ++i) {
        const RawDocument& d = docs[i];
        if (d.pretokenized) {
          out.insert(d.tokens.begin(), d.tokens.end());
          continue;
        }
        for_each_token(
            d.text, scratch,
            [&](std::string_view t) {
              if (out.find(t) == out.end()) out.emplace(t);
            },
            version);
      }
    } catch (...) {
      errors[b] = std::current_exception();
    }
  }
  WordSet out;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (errors[b]) std::rethrow_exception(errors[b]);
    if (out.empty())
      out = std::move(sets[b]);
    else
      out.merge(sets[b]);
  }
  return out;
}

}  // namespace lcrwmd
