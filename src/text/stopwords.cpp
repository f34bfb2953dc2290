#include <algorithm>
#include <fstream>

#include "lcrwmd/error.h"
#include "lcrwmd/text.h"

namespace lcrwmd {

StopWords StopWords::load(const std::string& path, std::uint32_t version) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open stop-word file");
  StopWords s;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    try {
      s.add(line, version);
    } catch (const Error& e) {
      throw Error(path + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  if (in.bad()) throw Error(path + ": read error");
  return s;
}

void StopWords::add(std::string_view word, std::uint32_t version) {
  // Stop words go through the tokenizer so they match tokens exactly ("Don't" -> "don't").
  std::string scratch;
  for_each_token(
      word, scratch, [&](std::string_view t) { words_.emplace(t); }, version);
}

}  // namespace lcrwmd

namespace lcrwmd {

std::vector<std::string> StopWords::sorted() const {
  std::vector<std::string> out(words_.begin(), words_.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lcrwmd
