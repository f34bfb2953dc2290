#include "lcrwmd/corpus.h"
#include "lcrwmd/text.h"

namespace lcrwmd {

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string scratch;
  for_each_token(text, scratch, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

WordSet distinct_tokens(const std::vector<RawDocument>& docs) {
  WordSet out;
  std::string scratch;
  for (const RawDocument& d : docs) {
    if (d.pretokenized) {
      out.insert(d.tokens.begin(), d.tokens.end());
      continue;
    }
    for_each_token(d.text, scratch, [&](std::string_view t) {
      if (out.find(t) == out.end()) out.emplace(t);
    });
  }
  return out;
}

}  // namespace lcrwmd
