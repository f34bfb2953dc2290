#pragma once
// The hybrid's top-k by Fagin's threshold algorithm over its two lists, bm25's best scores and
// query-to-document's least distances: written once for one index and for a collection's
// segments (hybrid.cpp), and tested against fusing every document's halves.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "lcrwmd/topk.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

// One query's standardisation. fuse() is monotone: each step of its arithmetic rounds
// monotonically, so it rises with the distance and falls with the score, and a bound of both
// halves bounds the fused value.
struct HybridScale {
  double score_mean = 0, score_sd = 1, distance_mean = 0, distance_sd = 1, weight = 0;
  float fuse(float distance, double score) const {
    return static_cast<float>(weight * (distance - distance_mean) / distance_sd -
                              (score - score_mean) / score_sd);
  }
};

// The least distance at which a document scoring at most `score_above` can no longer enter a
// top-k whose values stay below `ceiling` and, once `best` is full, beat its worst (the fused
// value rises with the distance: every distance from it on is out too); +inf where none is.
// Found over the non-negative floats' bit patterns, which order as the floats do.
inline float least_distance_out(const HybridScale& z, double score_above, float ceiling,
                                const TopK& best) {
  const auto out = [&](float d) {
    const float f = z.fuse(d, score_above);
    return f >= ceiling || (best.full() && f > best.worst().distance);
  };
  constexpr float kMax = std::numeric_limits<float>::max();
  if (!out(kMax)) return std::numeric_limits<float>::infinity();
  std::uint32_t lo = 0, hi = std::bit_cast<std::uint32_t>(kMax);  // out(hi); the least sought
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (out(std::bit_cast<float>(mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return std::bit_cast<float>(lo);
}

// The lists start at max(k, 32) and go four times deeper each round until no document on
// neither can beat the k-th best; each round walks both again from their start. At a million
// documents 32 settles nearly all typed queries' top-10 (starting at 16 searched the median
// query faster but the service's slowest queries slower: BENCHMARKS.md, "The hybrid's sample
// in one pass").
inline constexpr std::size_t kFusedFirstDepth = 32;

// One query's k best fused values (below `ceiling`, best first, ties to the smaller position),
// by position: lexical(depth) its `depth` best scores (as Neighbors of distance minus the
// score, best first), nearest(depth, below) its `depth` live documents of least distance below
// `below` in order (nullopt where that walk gives up: then so does this), distances(positions,
// out) documents' distances (positions ascending), score(p) a document's score.
//
// The lexical list comes first, its documents' distances found at once: the k-th best of them
// tells how near a document scoring no more than the list's last must lie to enter, and the
// distance walk looks no nearer than that (with a small distance weight, most typed queries'
// best documents share their words, and the walk then reads little). A document on neither
// list scores at most the lexical list's last (0 where that list holds every document sharing
// a term) and lies at least as far as the walk's last, or beyond `below` where the walk found
// fewer than asked; the fused value is monotone in both halves, so once the k-th best is below
// that bound no other document can enter.
template <typename Nearest, typename Lexical, typename Distances, typename Score>
std::optional<BatchDistance::Walked> fused_walk(const HybridScale& z, std::size_t k, float ceiling,
                                                const Nearest& nearest, const Lexical& lexical,
                                                const Distances& distances, const Score& score) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  BatchDistance::Walked out;
  for (std::size_t depth = std::max(k, kFusedFirstDepth);; depth *= 4) {
    const std::vector<Neighbor> lex = lexical(depth);
    std::vector<std::uint32_t> listed(lex.size());
    for (std::size_t i = 0; i < lex.size(); ++i)
      listed[i] = static_cast<std::uint32_t>(lex[i].index);
    std::sort(listed.begin(), listed.end());
    std::vector<float> d(listed.size());
    distances(std::span<const std::uint32_t>(listed), d.data());
    out.computed += listed.size();
    TopK best(k);
    const auto offer = [&](float distance, std::uint32_t position) {
      const Neighbor h{z.fuse(distance, score(position)), position};
      if (h.distance < ceiling) best.push(h);
    };
    for (std::size_t i = 0; i < listed.size(); ++i) offer(d[i], listed[i]);
    // The lexical list's last float distance is minus a score it holds: a document off the
    // list scores less than the next float up.
    const double score_above =
        lex.size() < depth ? 0.0 : static_cast<double>(std::nextafter(-lex.back().distance, kInf));
    const float below = least_distance_out(z, score_above, ceiling, best);
    const std::optional<BatchDistance::Walked> near = nearest(depth, below);
    if (!near) return std::nullopt;
    out.computed += near->computed;
    for (const Neighbor& c : near->top) {
      const auto position = static_cast<std::uint32_t>(c.index);
      if (!std::binary_search(listed.begin(), listed.end(), position)) offer(c.distance, position);
    }
    bool done = near->top.size() < depth;  // every live document below `below` is listed
    if (!done) {
      const float bound = z.fuse(near->top.back().distance, score_above);
      done = bound >= ceiling || (best.full() && best.worst().distance < bound);
    }
    if (done) {
      out.top = best.take_sorted();
      return out;
    }
  }
}

}  // namespace lcrwmd
