#pragma once
// A term's postings in blocks, each with what bounds the score of any of its postings under a
// scoring that rises with the term's count in a document and falls with the document's length
// (BM25 whatever its k1, b and mean length): the block's impacts, the (count, length) pairs no
// other posting of the block beats on both (Lucene's impacts; Ding & Suel's block maxima, kept
// free of the scoring's parameters, which change with the collection). A search skips the
// blocks whose best impact cannot enter its top-k.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lcrwmd/index.h"

namespace lcrwmd {

// Postings a block holds, but the last: Lucene's and PISA's, a block's bounds worth the few
// postings they let a search skip.
inline constexpr std::size_t kPostingBlock = 128;

struct Impact {
  std::uint32_t count;   // the term's occurrences in a document
  std::uint32_t length;  // that document's tokens
};

struct PostingBlocks {
  std::size_t block_size = kPostingBlock;
  // Block b holds postings [b * block_size, (b + 1) * block_size) of the list; last[b] is its
  // last document, as the postings number them (Index::Postings::docs).
  std::vector<std::uint32_t> last;
  // first[b]: its first document, so that a search asks whether a block starts within a window
  // without reading the postings of a list it may skip (a miss to memory per list and window).
  std::vector<std::uint32_t> first;
  // Block b's impacts are impacts[impact_begin[b], impact_begin[b + 1]), counts descending and
  // lengths with them; whole: the list's.
  std::vector<std::uint32_t> impact_begin{0};
  std::vector<Impact> impacts;
  std::vector<Impact> whole;

  std::size_t size() const { return last.size(); }
  std::span<const Impact> block(std::size_t b) const {
    return {impacts.data() + impact_begin[b], impacts.data() + impact_begin[b + 1]};
  }
};

// The blocks of `postings` (a term's in `index`, whose lengths they read).
PostingBlocks make_posting_blocks(const Index& index, const Index::Postings& postings,
                                  std::size_t block_size = kPostingBlock);

}  // namespace lcrwmd
