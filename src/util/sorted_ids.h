#pragma once
// Ascending lists of document numbers (a collection's deleted documents, a search's left-out
// ones, a posting list's documents): checked, walked past and searched.
#include <algorithm>
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

// Whether ascending `list` holds d, for d ascending from one call to the next: galloping from
// `at`, the first position not yet passed, which it moves to the first at or past d.
inline bool holds(std::span<const std::uint32_t> list, std::size_t& at, std::uint32_t d) {
  std::size_t lo = at, step = 1;
  while (lo + step < list.size() && list[lo + step] < d) lo += step, step *= 2;
  const auto end = list.begin() + static_cast<std::ptrdiff_t>(std::min(list.size(), lo + step + 1));
  at = static_cast<std::size_t>(
      std::lower_bound(list.begin() + static_cast<std::ptrdiff_t>(lo), end, d) - list.begin());
  return at < list.size() && list[at] == d;
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
