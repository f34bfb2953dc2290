#pragma once
// A string-keyed hash map, and a set of strings, that can be probed with a string_view without
// building a string.
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace lcrwmd {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
using WordSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

}  // namespace lcrwmd
