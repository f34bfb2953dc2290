#pragma once
// A top-k from lower bounds, as deep as asked: documents ordered by their bounds, each one's
// distance found (refined) in that order until the depth-th least distance found is below
// every bound left. What a collection's hybrid walk reads of a segment too small to walk.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lcrwmd/topk.h"

namespace lcrwmd {

// Documents by their lower bounds, their distances found in that order as deep as asked:
// top(depth) is the `depth` least (distance, document) of them, as sorting every
// document's distance gives, each refined once (refine(i): document i's distance, at least its
// bound).
struct ByBound {
  std::vector<Neighbor> bound;  // (lower bound, document), [0, ordered) ascending
  std::vector<Neighbor> exact;  // the first exact.size() of them, refined
  std::size_t ordered = 0;

  // The least `count` not yet refined in order after those before them (or every one left).
  void order(std::size_t count) {
    const std::size_t end = std::min(bound.size(), exact.size() + count);
    if (end <= ordered) return;
    const auto at = [&](std::size_t i) { return bound.begin() + static_cast<std::ptrdiff_t>(i); };
    std::nth_element(at(ordered), at(end - 1), bound.end());
    std::sort(at(ordered), at(end));
    ordered = end;
  }
  template <typename Refine>
  std::vector<Neighbor> top(std::size_t depth, const Refine& refine) {
    for (std::size_t chunk = std::max<std::size_t>(64, depth);; chunk *= 2) {
      order(1);
      const bool all = exact.size() == bound.size();
      const std::size_t m = std::min(depth, exact.size());
      if (m > 0 && (all || m == depth)) {
        const auto mth = exact.begin() + static_cast<std::ptrdiff_t>(m);
        std::nth_element(exact.begin(), mth - 1, exact.end());
        // Every document not refined is at least as far as the next bound: past the m-th.
        if (all || (mth - 1)->distance < bound[exact.size()].distance) {
          std::vector<Neighbor> best(exact.begin(), mth);
          std::sort(best.begin(), best.end());
          return best;
        }
      }
      if (all) return {};
      order(chunk);
      for (std::size_t c = 0; c < chunk && exact.size() < bound.size(); ++c) {
        const Neighbor& b = bound[exact.size()];
        exact.push_back({refine(static_cast<std::size_t>(b.index)), b.index});
      }
    }
  }
};

}  // namespace lcrwmd
