#include "methods/lc_rwmd/threshold_walk.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lcrwmd {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kSkipped = kNone - 1;

// The longest query walked (its words of non-zero weight): each document met keeps a distance
// per word, and a long query ("more like this") meets most documents on its words' postings
// anyway: the linear pass then reads less.
constexpr std::size_t kMaxWalkWords = 64;
// The walk wants few results next to the documents: k at most one in this many.
constexpr std::size_t kDocsPerResult = 16;
// It gives up (the linear pass instead) once it has read this fraction of the index's stored
// words in postings and selections: past it, the linear pass would have cost little more.
constexpr std::size_t kBudgetFraction = 4;
// The fewest words a selection past the kept nearest words takes (then four times the last).
constexpr std::size_t kFirstSelection = 64;

struct Entry {
  float sq;  // squared distance (or, while selecting, its lower bound)
  std::uint32_t word;
};
bool before(const Entry& a, const Entry& b) {
  return a.sq < b.sq || (a.sq == b.sq && a.word < b.word);
}

// One query word's way through the vocabulary, nearest first.
struct Cursor {
  std::size_t t = 0;         // position in the query
  std::vector<Entry> words;  // exact squared distances, ascending from `next` on
  std::size_t next = 0;      // the next word to walk
  float ring = kInf;         // every word not in `words` is at least this (squared) far
  Entry last{0.0f, 0};       // the last word selected by (bound, word): the next start after it
  std::size_t selected = 0;  // words selected so far
  std::size_t walked = 0;

  float frontier() const { return next < words.size() ? std::min(words[next].sq, ring) : ring; }
  // Whether the next word is known to be the nearest not walked.
  bool ready() const { return next < words.size() && words[next].sq <= ring; }
  bool exhausted() const { return next >= words.size() && ring == kInf; }
  // The frontier once the next word is walked.
  float after() const {
    return next + 1 < words.size() ? std::min(words[next + 1].sq, ring) : ring;
  }
};

// What one thread keeps of the documents a query meets: a slot per document met, found through
// a table over every document (kept between queries, cleared through the documents set).
struct Met {
  std::vector<std::uint32_t> slot;  // per document: kNone, kSkipped, or its slot
  std::vector<std::uint32_t> doc;   // per slot
  std::vector<float> sq;            // per slot, a word each: met squared distance, or +inf
  std::vector<std::uint32_t> left;  // per slot: weighted words not met; 0 once D2 is known
  std::span<const std::uint32_t> skipped;

  void start(std::size_t n_docs, std::span<const std::uint32_t> skip) {
    if (slot.size() < n_docs) slot.resize(n_docs, kNone);
    skipped = skip;
    for (const std::uint32_t d : skip) slot[d] = kSkipped;
  }
  void clear() {
    for (const std::uint32_t d : doc) slot[d] = kNone;
    for (const std::uint32_t d : skipped) slot[d] = kNone;
    doc.clear(), sq.clear(), left.clear();
    skipped = {};
  }
};

}  // namespace

std::optional<BatchDistance::Walked> ThresholdWalk::top_k(
    std::size_t j, std::size_t k, float ceiling, std::span<const std::uint32_t> skip) const {
  const std::size_t n = index_.n_docs(), v = index_.vocab_size();
  const std::uint64_t c0 = batch_.cols_indptr[j];
  const std::size_t h = batch_.cols_indptr[j + 1] - c0;
  const float* weight = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
  std::vector<Cursor> cursors;
  for (std::size_t t = 0; t < h; ++t)
    if (weight[t] > 0) {
      cursors.emplace_back();
      cursors.back().t = t;
    }
  if (k == 0) return BatchDistance::Walked{};
  if (cursors.empty() || cursors.size() > kMaxWalkWords || k * kDocsPerResult > n)
    return std::nullopt;
  const Index::WordPostings& postings = index_.word_postings();
  const std::size_t budget = index_.nnz() / kBudgetFraction;
  std::size_t work = 0, computed = 0;

  // Each word's kept nearest words, made exact and sorted: the start of its way.
  for (Cursor& c : cursors) {
    const auto kept = nearest_.of(batch_.cols[c0 + c.t]);
    for (const NearestWords::Entry& e : kept)
      c.words.push_back({cache_.exact(e.word, j, c.t), e.word});
    std::sort(c.words.begin(), c.words.end(), before);
    c.selected = kept.size();
    if (kept.size() == NearestWords::kKept) {
      c.ring = kept.back().lo;
      c.last = {kept.back().lo, kept.back().word};
    }
  }
  // The next words past those selected, by bound from the kept distances, made exact: four
  // times as many as before (every word left where fewer remain).
  const auto select_more = [&](Cursor& c) {
    thread_local std::vector<Entry> pool;
    pool.clear();
    for (std::size_t u = 0; u < v; ++u) {
      const Entry e{cache_.row(u)[c0 + c.t], static_cast<std::uint32_t>(u)};
      if (before(c.last, e)) pool.push_back(e);
    }
    work += v;
    const std::size_t want = std::max(kFirstSelection, 3 * c.selected);
    if (pool.size() > want) {
      std::nth_element(pool.begin(), pool.begin() + (want - 1), pool.end(), before);
      pool.resize(want);
      c.last = pool.back();
      c.ring = c.last.sq;
    } else {
      c.ring = kInf;
    }
    c.words.erase(c.words.begin(), c.words.begin() + static_cast<std::ptrdiff_t>(c.next));
    c.next = 0;
    for (const Entry& e : pool) c.words.push_back({cache_.exact(e.word, j, c.t), e.word});
    std::sort(c.words.begin(), c.words.end(), before);
    c.selected += pool.size();
  };

  // Zero-weight words add nothing to D2 (0 times a finite root): their terms stay 0.
  std::vector<float> front(h, 0.0f), terms(h);
  for (const Cursor& c : cursors) front[c.t] = c.frontier();
  thread_local Met met;
  met.start(n, skip);
  struct Clear {
    Met& m;
    ~Clear() { m.clear(); }
  } clear{met};

  TopK best(k);
  const auto admits = [&](const Neighbor& b) { return b.distance < ceiling && best.accepts(b); };
  const auto known = [&](std::uint32_t s, float d2) {
    met.left[s] = 0;
    ++computed;
    const Neighbor b{d2, met.doc[s]};
    if (admits(b)) best.push(b);
  };
  const auto bound_of = [&](std::uint32_t s) {
    const float* x = met.sq.data() + std::size_t{s} * h;
    for (std::size_t t = 0; t < h; ++t) terms[t] = x[t] < kInf ? x[t] : front[t];
    return d2_.weighted_root_sum(j, terms.data());
  };
  const auto finish = [&](std::uint32_t s) {
    known(s, d2_.finish(j, met.doc[s], met.sq.data() + std::size_t{s} * h));
  };
  // The documents met for some words but not all whose bounds let them in, (bound, document).
  std::vector<Neighbor> partial;
  const auto gather_partial = [&] {
    partial.clear();
    for (std::uint32_t s = 0; s < met.doc.size(); ++s)
      if (met.left[s] > 0) {
        const Neighbor b{bound_of(s), met.doc[s]};
        if (admits(b)) partial.push_back(b);
      }
  };
  const auto slot_of = [&](const Neighbor& b) {
    return met.slot[static_cast<std::size_t>(b.index)];
  };
  const auto walk = [&](Cursor& c) {
    const Entry e = c.words[c.next++];
    ++c.walked;
    const auto docs = postings.of(e.word);
    work += docs.size();
    for (const std::uint32_t d : docs) {
      std::uint32_t s = met.slot[d];
      if (s == kSkipped) continue;
      if (s == kNone) {
        s = met.slot[d] = static_cast<std::uint32_t>(met.doc.size());
        met.doc.push_back(d);
        met.left.push_back(static_cast<std::uint32_t>(cursors.size()));
        for (std::size_t t = 0; t < h; ++t) met.sq.push_back(weight[t] > 0 ? kInf : 0.0f);
      }
      float& x = met.sq[std::size_t{s} * h + c.t];
      if (x < kInf || met.left[s] == 0) continue;
      x = e.sq;  // the first met is the nearest: words come in ascending distance
      if (--met.left[s] == 0)
        known(s, d2_.weighted_root_sum(j, met.sq.data() + std::size_t{s} * h));
    }
    if (!c.ready() && !c.exhausted()) select_more(c);
    front[c.t] = c.frontier();
  };

  for (;;) {
    const float T = d2_.weighted_root_sum(j, front.data());
    if (!(T < ceiling) || (best.full() && best.worst().distance < T)) break;
    if (work > budget) return std::nullopt;
    // Once every word has walked a word, the documents met for the most lie lowest: finishing
    // the least of them settles a k-th best for the walk to beat.
    const bool each_walked =
        std::all_of(cursors.begin(), cursors.end(), [](const Cursor& c) { return c.walked > 0; });
    if (!best.full() && each_walked) {
      gather_partial();
      if (!partial.empty()) {
        const std::size_t m = std::min(partial.size(), k - best.size());
        std::nth_element(partial.begin(), partial.begin() + static_cast<std::ptrdiff_t>(m - 1),
                         partial.end());
        for (std::size_t i = 0; i < m; ++i) finish(slot_of(partial[i]));
        continue;
      }
    }
    // The word that lifts T the most per posting read walks next.
    Cursor* pick = nullptr;
    double rate = -1;
    for (Cursor& c : cursors) {
      if (!c.ready()) continue;
      const double gain =
          weight[c.t] * (std::sqrt(double{c.after()}) - std::sqrt(double{c.frontier()}));
      const double r = (c.walked == 0 ? kInf : gain) /
                       static_cast<double>(postings.of(c.words[c.next].word).size() + 1);
      if (r > rate) rate = r, pick = &c;
    }
    if (pick == nullptr) return std::nullopt;  // every word's way ended short of an answer
    walk(*pick);
  }
  // The documents met for some words whose bound still lets them in, least bound first.
  gather_partial();
  std::sort(partial.begin(), partial.end());
  for (const Neighbor& b : partial) {
    if (!admits(b)) break;
    finish(slot_of(b));
  }
  // Every word's way ended (T infinite) short of k: the documents never met (holding no word)
  // are the linear pass's to rank.
  if (!best.full() && met.doc.size() + skip.size() < n &&
      !(d2_.weighted_root_sum(j, front.data()) < kInf))
    return std::nullopt;
  return BatchDistance::Walked{best.take_sorted(), computed};
}

}  // namespace lcrwmd
