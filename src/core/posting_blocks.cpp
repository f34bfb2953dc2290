// PostingBlocks (core/posting_blocks.h): each block's impacts, the pairs on its Pareto front of
// (more occurrences, fewer tokens).
#include "core/posting_blocks.h"

#include <algorithm>

#include "lcrwmd/error.h"

namespace lcrwmd {

namespace {

// Keeps of `pairs` the front: counts descending, each kept pair's length below every pair's
// with a count at least its.
void keep_front(std::vector<Impact>& pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const Impact& a, const Impact& b) {
    return a.count != b.count ? a.count > b.count : a.length < b.length;
  });
  std::size_t kept = 0;
  for (const Impact& p : pairs)
    if (kept == 0 || p.length < pairs[kept - 1].length) pairs[kept++] = p;
  pairs.resize(kept);
}

}  // namespace

PostingBlocks make_posting_blocks(const Index& index, const Index::Postings& postings,
                                  std::size_t block_size) {
  if (block_size == 0) throw Error("posting blocks: a block holds at least one posting");
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
      pairs.push_back({postings.counts[e], index.doc_length(postings.docs[e] - postings.first)});
    keep_front(pairs);
    out.last.push_back(postings.docs[end - 1]);
    out.first.push_back(postings.docs[begin]);
    out.impacts.insert(out.impacts.end(), pairs.begin(), pairs.end());
    out.impact_begin.push_back(static_cast<std::uint32_t>(out.impacts.size()));
  }
  out.whole = out.impacts;  // the front of the fronts
  keep_front(out.whole);
  return out;
}

}  // namespace lcrwmd
