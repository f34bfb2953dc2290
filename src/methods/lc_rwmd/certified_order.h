#pragma once
// Which of a word's neighbours come first, decided from certified intervals: words t < h whose
// squared distances d_t are known to lie in [lo(t), hi(t)] (methods/lc_rwmd/phase1.h), computed
// exactly by exact(t) only where the intervals cannot decide. The order is by (d_t, t): ties go to
// the smaller position, so the result is the same whatever intervals a precision gave.
//
//   count < h:  the count nearest, in order.
//   count == h: the order as far as a transfer of mass `reach` goes (the shortest prefix whose
//               masses sum to reach in float, as ICT's phase 1 adds them) and one word more.
//
// ACT's transfers read nothing past that (an ACT-k transfer stops at its (k+1)-th word; an ICT
// transfer only takes what float rounding left at the word after its prefix).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace lcrwmd {

struct Ranked {
  float d;  // squared distance, exact
  std::uint32_t t;
  bool operator<(const Ranked& o) const { return d < o.d || (d == o.d && t < o.t); }
};

// Appends the ordered words to `out` (cleared first); returns how many exact() calls it made.
template <typename Lo, typename Hi, typename Mass, typename Exact>
std::size_t certified_nearest(std::size_t h, std::size_t count, float reach, Lo&& lo, Hi&& hi,
                              Mass&& mass, Exact&& exact, std::vector<Ranked>& out,
                              std::vector<Ranked>& scratch) {
  out.clear();
  if (h == 0) return 0;
  if (count < h) {
    // The count-th smallest upper bound: count words lie at most that far, so the count nearest
    // do too, and a word whose lower bound exceeds it is farther than all of them.
    scratch.clear();
    for (std::size_t t = 0; t < h; ++t) scratch.push_back({hi(t), static_cast<std::uint32_t>(t)});
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(count - 1),
                     scratch.end());
    const float limit = scratch[count - 1].d;
    for (std::size_t t = 0; t < h; ++t)
      if (lo(t) <= limit) out.push_back({exact(t), static_cast<std::uint32_t>(t)});
    const std::size_t recomputed = out.size();
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(count), out.end());
    out.resize(count);
    return recomputed;
  }
  // All of them: words taken in ascending lower bound and computed, until the order of those
  // computed is certain as far as needed: the last needed is nearer than any word not yet
  // computed can be.
  scratch.clear();
  for (std::size_t t = 0; t < h; ++t) scratch.push_back({lo(t), static_cast<std::uint32_t>(t)});
  std::sort(scratch.begin(), scratch.end());
  // A first guess of how far to compute: the prefix by upper bound that carries `reach`, and
  // one more, lies within that prefix's last upper bound.
  float guess = std::numeric_limits<float>::infinity();
  {
    std::vector<Ranked>& by_hi = out;  // borrowed until the exact values start
    for (std::size_t t = 0; t < h; ++t) by_hi.push_back({hi(t), static_cast<std::uint32_t>(t)});
    std::sort(by_hi.begin(), by_hi.end());
    float held = 0;
    std::size_t s = 0;
    for (; s < h && held < reach; ++s) held += mass(by_hi[s].t);
    if (s < h) guess = by_hi[s].d;
    out.clear();
  }
  std::size_t done = 0;
  for (; done < h && scratch[done].d <= guess; ++done)
    out.push_back({exact(scratch[done].t), scratch[done].t});
  for (;;) {
    std::sort(out.begin(), out.end());
    float held = 0;
    std::size_t prefix = 0;
    for (; prefix < out.size() && held < reach; ++prefix) held += mass(out[prefix].t);
    const std::size_t want = prefix + 1;
    if (done == h) {  // every word computed: the order is certain
      out.resize(std::min(want, out.size()));
      return done;
    }
    if (held >= reach && want <= out.size() && out[want - 1].d < scratch[done].d) {
      out.resize(want);
      return done;
    }
    out.push_back({exact(scratch[done].t), scratch[done].t});
    ++done;
  }
}

}  // namespace lcrwmd
