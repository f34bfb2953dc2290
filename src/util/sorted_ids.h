#pragma once
// Ascending lists of document numbers (a collection's deleted documents, a search's left-out
// ones): checked, and walked past.
#include <cstddef>
#include <cstdint>
#include <span>

namespace lcrwmd {

// Whether `ids` ascend strictly, each below n.
inline bool ascending_below(std::span<const std::uint32_t> ids, std::size_t n) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= n || (i > 0 && ids[i] <= ids[i - 1])) return false;
  return true;
}

// f(i) for each i in [0, n) that `skipped` (ascending) does not hold, in order.
template <typename F>
void for_each_kept(std::size_t n, std::span<const std::uint32_t> skipped, F&& f) {
  for (std::size_t i = 0, s = 0; i < n; ++i) {
    if (s < skipped.size() && skipped[s] == i) {
      ++s;
      continue;
    }
    f(i);
  }
}

}  // namespace lcrwmd
