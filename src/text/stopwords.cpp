#include <algorithm>
#include <fstream>

#include "lcrwmd/error.h"
#include "lcrwmd/text.h"

namespace lcrwmd {

StopWords StopWords::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open stop-word file");
  StopWords s;
  std::string line;
  while (std::getline(in, line)) s.add(line);
  if (in.bad()) throw Error(path + ": read error");
  return s;
}

void StopWords::add(std::string_view word) {
  // Stop words go through the tokenizer so they match tokens exactly ("Don't" -> "don't").
  std::string scratch;
  for_each_token(word, scratch, [&](std::string_view t) { words_.emplace(t); });
}

}  // namespace lcrwmd

namespace lcrwmd {

std::vector<std::string> StopWords::sorted() const {
  std::vector<std::string> out(words_.begin(), words_.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lcrwmd
