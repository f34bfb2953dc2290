#include "lcrwmd/text.h"

namespace lcrwmd {

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string scratch;
  for_each_token(text, scratch, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

}  // namespace lcrwmd
