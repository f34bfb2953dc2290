#pragma once
// A count and its noun as a reader expects them (messages, notes, the front ends): "1 segment", "2
// segments", "1 query".
#include <cstddef>
#include <string>
#include <string_view>

namespace lcrwmd {

inline std::string plural(std::size_t n, std::string_view noun) {
  std::string s = std::to_string(n) + " " + std::string(noun);
  if (n == 1) return s;
  if (noun.size() > 1 && noun.back() == 'y' &&
      std::string_view("aeiou").find(noun[noun.size() - 2]) == std::string_view::npos)
    return s.substr(0, s.size() - 1) + "ies";
  return s + "s";
}

}  // namespace lcrwmd
