// PostingBlocks (core/posting_blocks.h): each block's impacts, the pairs on its Pareto front of
// (more occurrences, fewer tokens).
#include "core/posting_blocks.h"

#include <algorithm>
#include <cstdint>

#include "core/posting_reader.h"
#include "lcrwmd/error.h"

namespace lcrwmd {

namespace {

// Keeps of `pairs` the front: counts descending, each kept pair's length below every pair's
// with a count at least its. Only a count's least length can be kept, so the small counts (a
// block's nearly always) are taken by a least per count, and only the rest sorted: a sort of
// every block's pairs weighed on a process's first typed searches (BENCHMARKS.md).
void keep_front(std::vector<Impact>& pairs) {
  constexpr std::uint32_t kCounts = 64;
  std::uint32_t least[kCounts];
  std::uint64_t seen = 0;  // the small counts met
  const auto large = std::partition(pairs.begin(), pairs.end(),
                                    [](const Impact& p) { return p.count >= kCounts; });
  for (auto p = large; p != pairs.end(); ++p) {
    const std::uint64_t bit = std::uint64_t{1} << p->count;
    least[p->count] = (seen & bit) != 0 ? std::min(least[p->count], p->length) : p->length;
    seen |= bit;
  }
  std::sort(pairs.begin(), large, [](const Impact& a, const Impact& b) {
    return a.count != b.count ? a.count > b.count : a.length < b.length;
  });
  // Written in place: never past the pair read, nor past the pairs the small counts came from.
  std::size_t kept = 0;
  const auto keep = [&](const Impact p) {
    if (kept == 0 || p.length < pairs[kept - 1].length) pairs[kept++] = p;
  };
  const auto n_large = static_cast<std::size_t>(large - pairs.begin());
  for (std::size_t i = 0; i < n_large; ++i) keep(pairs[i]);
  for (std::uint32_t c = kCounts; c-- > 0;)
    if ((seen >> c & 1) != 0) keep({c, least[c]});
  pairs.resize(kept);
}

}  // namespace

PostingBlocks make_posting_blocks(const Index& index, const Index::Postings& postings,
                                  std::size_t block_size) {
  if (block_size == 0) throw Error("posting blocks: a block holds at least one posting");
  PostingReader list(postings);
  PostingBlocks out;
  out.block_size = block_size;
  const std::size_t n = postings.size, n_blocks = (n + block_size - 1) / block_size;
  out.last.reserve(n_blocks);
  out.first.reserve(n_blocks);
  out.impact_begin.reserve(n_blocks + 1);
  std::vector<Impact> pairs;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const std::size_t begin = b * block_size, end = std::min(n, begin + block_size);
    pairs.clear();
    for (std::size_t e = begin; e < end; ++e)
      pairs.push_back({list.count(e), index.doc_length(list.doc(e) - list.first())});
    keep_front(pairs);
    out.last.push_back(list.doc(end - 1));
    out.first.push_back(list.doc(begin));
    out.impacts.insert(out.impacts.end(), pairs.begin(), pairs.end());
    out.impact_begin.push_back(static_cast<std::uint32_t>(out.impacts.size()));
  }
  out.whole = out.impacts;  // the front of the fronts
  keep_front(out.whole);
  return out;
}

}  // namespace lcrwmd
