// Bm25Scorer::top_k (methods/bm25/bm25.h): block-max MaxScore (Turtle & Flood's MaxScore, with
// Ding & Suel's block maxima taken window by window as Lucene 9's MaxScoreBulkScorer does).
//
// Each part's documents are walked in windows that end where some term's current block ends, so
// that within a window every term's contribution is bounded by one block's impacts. The terms
// whose window bounds, summed from the smallest, cannot lift a document into the top-k are
// non-essential: a document is met only on the lists of the others, and looked up on theirs
// (largest bound first) only while its score so far plus what they can still add may enter.
// The terms whose whole lists' bounds, summed from the smallest, cannot lift a document in are
// non-essential in every window from there on: their blocks end no window (bounded by the whole
// list's impacts instead), so that a query's common words, once the top-k has filled, cost a
// lookup per document met on its rare ones, not a window per block of their long lists.
// A document scored in full is summed in the query's term order, the arithmetic of score(), so
// that its score is the same bytes however it was reached.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "methods/bm25/bm25.h"

namespace lcrwmd {

namespace {

// A query term's list in one part: where it is, and its current block's bound.
struct Cursor {
  PostingReader* list;
  const PostingBlocks* blocks;
  double w;           // term_weight
  std::size_t slot;   // the term's place in the query
  std::size_t e = 0;  // the posting it is at
  std::size_t b = 0;  // the block holding what it may meet next
  std::size_t bound_of = std::numeric_limits<std::size_t>::max();  // the block `bound` is of
  double bound = 0;
  double whole = 0;   // its bound over the whole list
  double window = 0;  // its bound within the current window (0: no posting in it)

  std::size_t block_begin() const { return b * blocks->block_size; }
  std::size_t block_end() const { return std::min(list->size(), (b + 1) * blocks->block_size); }
  // To the block that may hold document d (its blocks before d passed over).
  void reach(std::uint32_t d) {
    const std::vector<std::uint32_t>& last = blocks->last;
    while (b < last.size() && last[b] < d) ++b;
  }
  // To its first posting at or past document d, within its current block.
  void seek(std::uint32_t d) {
    e = std::max(e, block_begin());
    const std::size_t end = block_end();
    if (e < end && list->doc(e) < d) e = std::min(end, list->seek(e, d));
  }
  // Whether its posting e, within its current block, is document d's.
  bool at(std::uint32_t d) { return e < block_end() && list->doc(e) == d; }
};

// Documents a window's essential lists are walked over at a time, at most: their sums and terms
// stay in the CPU's L2 (five terms: 200 KB; a longer query's strips are shorter).
constexpr std::size_t kStripDocs = 4096;
constexpr std::size_t kStripTerms = 32768;  // strip documents times query terms, at most

}  // namespace

std::vector<Neighbor> Bm25Scorer::top_k(std::size_t q, std::size_t k, float ceiling,
                                        TopKCounts* counts, const BlocksOf& blocks_of) const {
  TopK best(k);
  const std::uint64_t first_p = terms_.indptr[q], n_slots = terms_.indptr[q + 1] - first_p;
  // A document enters only with a distance below `bar`: the ceiling, sharing a term (below
  // 0), then the k-th best's (it wins its ties, being earlier).
  float bar = std::min(ceiling, 0.0f);
  // Bounds are summed in another order than scores and their impacts' arithmetic is not exactly
  // monotone: a bound is taken as this much larger than it is, far above the rounding of
  // either and far below any gap between two scores that rank differently.
  const double slack = 1.0 + static_cast<double>(n_slots + 8) * std::ldexp(1.0, -48);
  const auto cannot_enter = [&](double upper) { return bm25_distance(upper * slack) >= bar; };
  TopKCounts seen;
  // A strip of the window: which documents its essential lists met, their sums, and each
  // one's contributions by term (zeros where none, as score() adds them).
  const std::size_t strip = std::clamp<std::size_t>(
      std::bit_floor(kStripTerms / std::max<std::size_t>(n_slots, 1)), 64, kStripDocs);
  std::uint64_t met[kStripDocs / 64] = {};
  std::vector<double> sum(strip), terms(strip * n_slots, 0.0);
  std::vector<Cursor> cursors;
  // Each term's list as it is read, by its place in the query (a cursor points to its own).
  const std::unique_ptr<PostingReader[]> lists(new PostingReader[n_slots]);
  // The most a posting with one of these impacts adds under weight w: a list's or block's bound.
  const auto impacts_bound = [&](double w, std::span<const Impact> impacts) {
    double m = 0;
    for (const Impact& i : impacts) m = std::max(m, contribution(w, i.count, i.length));
    return m;
  };
  std::vector<std::size_t> order;
  std::vector<double> below;  // below[i]: the window bounds of order[0, i) summed
  const std::size_t n_parts = parts_.size();
  for (std::size_t s = 0; s < n_parts; ++s) {
    const Index& index = *parts_[s].index;
    const std::span<const std::uint32_t> deleted = parts_[s].deleted;
    cursors.clear();
    std::uint32_t first = 0;
    for (std::uint64_t slot = 0; slot < n_slots; ++slot) {
      const std::uint64_t p = first_p + slot;
      const std::uint32_t id = term_ids_[(p - first_term_) * n_parts + s];
      if (id == SegmentSet::kNoTerm) continue;
      const Index::Postings post = index.postings(id);
      if (post.size == 0) continue;
      first = post.first;
      lists[slot].reset(post);
      const PostingBlocks& blocks = blocks_of ? blocks_of(s, id) : index.posting_blocks(id);
      cursors.push_back({&lists[slot], &blocks, term_weight(p), slot});
      cursors.back().whole = impacts_bound(cursors.back().w, blocks.whole);
    }
    // Least whole bound first: the lists never walked again are the first ones.
    std::stable_sort(cursors.begin(), cursors.end(),
                     [](const Cursor& a, const Cursor& b) { return a.whole < b.whole; });
    const auto block_bound = [&](Cursor& c) {
      if (c.bound_of != c.b) {
        c.bound = impacts_bound(c.w, c.blocks->block(c.b));
        c.bound_of = c.b;
      }
      return c.bound;
    };
    std::size_t next_deleted = 0;
    std::uint64_t lo = first;  // the window's first document, as the postings number them
    while (!cursors.empty()) {
      // Each list to the block that holds what it may meet from lo on (the lists that are done
      // with dropped, the others' order kept).
      std::size_t live = 0;
      for (Cursor& c : cursors) {
        c.reach(static_cast<std::uint32_t>(lo));
        if (c.b == c.blocks->last.size()) continue;  // done with
        cursors[live++] = c;
      }
      cursors.resize(live);
      // The lists [0, g) whose whole bounds together cannot lift a document in: bounded by
      // them in this window, never walked. Nothing more can enter this part where that is all.
      std::size_t g = 0;
      for (double bounds = 0; g < live && cannot_enter(bounds + cursors[g].whole);)
        bounds += cursors[g++].whole;
      if (g == live) break;
      // The window ends where the first of the others' blocks does.
      std::uint64_t hi = std::numeric_limits<std::uint64_t>::max();
      for (std::size_t i = g; i < live; ++i)
        hi = std::min<std::uint64_t>(hi, cursors[i].blocks->last[cursors[i].b]);
      order.resize(live);
      for (std::size_t i = 0; i < live; ++i) {
        Cursor& c = cursors[i];
        c.window = i < g ? c.whole : c.blocks->first[c.b] <= hi ? block_bound(c) : 0.0;
        order[i] = i;
      }
      std::sort(
          order.begin() + static_cast<std::ptrdiff_t>(g), order.end(),
          [&](std::size_t a, std::size_t b) { return cursors[a].window < cursors[b].window; });
      // The non-essential lists: order[0, m), m >= g (below[g] is the sum g was found with).
      below.assign(live + 1, 0.0);
      std::size_t m = 0;
      for (std::size_t i = 0; i < live; ++i) below[i + 1] = below[i] + cursors[order[i]].window;
      while (m < live && cannot_enter(below[m + 1])) ++m;
      if (m == live) {  // nothing in the window can enter
        lo = hi + 1;
        continue;
      }
      for (std::size_t i = m; i < live; ++i) cursors[order[i]].seek(static_cast<std::uint32_t>(lo));
      // The window `strip` documents at a time: each essential list's postings in the strip
      // added to its documents' sums (in the lists' order, as a document-at-a-time walk adds
      // them) and kept per term; then the documents met, ascending. A strip starts at the next
      // posting of an essential list (a window bounded by a rare list's blocks is long).
      for (std::uint64_t s0 = lo;; s0 += strip) {
        std::uint64_t next = hi + 1;
        for (std::size_t i = m; i < live; ++i) {
          const Cursor& c = cursors[order[i]];
          if (c.e < c.block_end()) next = std::min<std::uint64_t>(next, c.list->doc(c.e));
        }
        s0 = std::max(s0, next);
        if (s0 > hi) break;
        const std::uint64_t s1 = std::min<std::uint64_t>(hi, s0 + strip - 1);
        for (std::size_t i = m; i < live; ++i) {
          Cursor& c = cursors[order[i]];
          const std::size_t end = c.block_end();
          // Its postings up to s1, a stored block at a time.
          for (bool more = c.e < end; more;) {
            PostingReader& list = *c.list;
            list.load(c.e);
            const std::uint32_t* docs = list.docs();
            const std::size_t base = list.begin(), stop = std::min(end, list.end()) - base;
            std::size_t j = c.e - base;
            for (; j < stop && docs[j] <= s1; ++j) {
              fetch_length_ahead(index, docs + j, docs + stop, first);
              const std::size_t r = docs[j] - s0;
              const double x =
                  contribution(c.w, list.counts()[j], index.doc_length(docs[j] - first));
              if ((met[r / 64] >> (r % 64) & 1) == 0) {
                met[r / 64] |= std::uint64_t{1} << (r % 64);
                sum[r] = below[m];
              }
              sum[r] += x;
              terms[r * n_slots + c.slot] = x;
            }
            c.e = base + j;
            more = j == stop && c.e < end;
          }
        }
        const std::size_t words = static_cast<std::size_t>(s1 - s0) / 64 + 1;
        for (std::size_t word = 0; word < words; ++word)
          for (std::uint64_t bits = met[word]; bits != 0; bits &= bits - 1) {
            const std::size_t r = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
            const auto doc = static_cast<std::uint32_t>(s0 + r);
            const std::size_t i_doc = doc - first;
            double* contribution_of = terms.data() + r * n_slots;
            double upper = sum[r];
            while (next_deleted < deleted.size() && deleted[next_deleted] < i_doc) ++next_deleted;
            const bool live_doc = next_deleted == deleted.size() || deleted[next_deleted] != i_doc;
            ++seen.documents;
            bool may_enter = live_doc && !cannot_enter(upper);
            for (std::size_t i = m; may_enter && i-- > 0;) {  // the largest bound first
              Cursor& c = cursors[order[i]];
              upper -= c.window;
              if (c.window > 0) {
                if (order[i] < g) c.reach(doc);  // a list whose blocks end no window
                c.seek(doc);
                if (c.at(doc)) {
                  const double x = contribution(c.w, c.list->count(c.e), index.doc_length(i_doc));
                  contribution_of[c.slot] = x;
                  upper += x;
                }
              }
              may_enter = !cannot_enter(upper);
            }
            if (may_enter) {
              double score = 0;  // in the query's order, as score() sums it
              for (std::size_t slot = 0; slot < n_slots; ++slot) score += contribution_of[slot];
              ++seen.scored;
              const Neighbor n{bm25_distance(score),
                               static_cast<std::int64_t>(parts_[s].first + i_doc)};
              if (n.distance < bar) {
                best.push(n);
                if (best.full()) bar = std::min(bar, best.worst().distance);
              }
            }
            for (std::size_t slot = 0; slot < n_slots; ++slot) contribution_of[slot] = 0.0;
          }
        std::fill_n(met, words, std::uint64_t{0});
      }
      lo = hi + 1;
    }
  }
  if (counts) {
    counts->documents += seen.documents;
    counts->scored += seen.scored;
  }
  return best.take_sorted();
}

}  // namespace lcrwmd
