#include "methods/lc_rwmd/threshold_walk.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/sorted_ids.h"

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
// a table over every document (kept between queries, cleared through the documents set). The
// met distances a column per query word (word t's slots at roots[t * cap]), so that every
// slot's bound is one pass per word.
struct Met {
  std::vector<std::uint32_t> slot;  // per document: kNone, kSkipped, or its slot
  std::vector<std::uint32_t> doc;   // per slot
  std::vector<std::uint32_t> left;  // per slot: weighted words not met; 0 once D2 is known
  std::vector<float> roots;         // per query word, per slot: met distance, or +inf
  std::vector<float> fresh;         // per query word: a new slot's term (+inf, or 0 unweighted)
  std::vector<float> bound;         // per slot, while bounding
  std::size_t cap = 0;              // slots each word's column holds
  std::span<const std::uint32_t> skipped;

  void start(std::size_t n_docs, const float* weight, std::size_t words,
             std::span<const std::uint32_t> skip) {
    if (slot.size() < n_docs) slot.resize(n_docs, kNone);
    fresh.resize(words);
    for (std::size_t t = 0; t < words; ++t) fresh[t] = weight[t] > 0 ? kInf : 0.0f;
    if (roots.size() < words * cap) roots.resize(words * cap);
    skipped = skip;
    for (const std::uint32_t d : skip) slot[d] = kSkipped;
  }
  float* root(std::size_t t) { return roots.data() + t * cap; }
  std::uint32_t add(std::uint32_t d, std::uint32_t words_left) {
    const std::size_t s = doc.size(), words = fresh.size();
    if (s == cap) {  // every column twice as long
      const std::size_t c = std::max<std::size_t>(4096, 2 * cap);
      std::vector<float> longer(words * c);
      for (std::size_t t = 0; t < words; ++t)
        std::copy_n(roots.data() + t * cap, s, longer.data() + t * c);
      roots.swap(longer);
      cap = c;
    }
    for (std::size_t t = 0; t < words; ++t) roots[t * cap + s] = fresh[t];
    doc.push_back(d);
    left.push_back(words_left);
    return static_cast<std::uint32_t>(s);
  }
  // Slot s's terms, in the query's order.
  void terms(std::uint32_t s, float* out) const {
    for (std::size_t t = 0; t < fresh.size(); ++t) out[t] = roots[t * cap + s];
  }
  void clear() {
    for (const std::uint32_t d : doc) slot[d] = kNone;
    for (const std::uint32_t d : skipped) slot[d] = kNone;
    doc.clear(), left.clear();
    skipped = {};
  }
};

// Query j's top-k from the postings of each word's nearest vocabulary word (its cursor's
// first), before any walk: a typed query's best documents hold most of its words, and its
// rarest words' lists are short. A document holding word t's nearest has t's term at its
// least, root(t); one lacking it, at least second(t), the next word's distance. The lists are
// taken rarest first (MaxScore's order); each document of a list not in a list taken before
// gets its bound from which nearest words it holds (each looked up in the other lists), and
// those whose bound can enter are finished from their own words, least bound first. Before
// each list, and after the last, every document in no list taken is at least the sum with
// second(t) for every list taken: once the k-th best is below that, the answer is complete
// (the sums are weighted_sum's, monotone in their terms: threshold_walk.h). Where it is not
// after every list (documents holding no nearest word could still enter), nullopt: the walk
// then finds them. Each list read adds its postings times the lists to `work`; a list that
// would take it past `budget` is not read (nullopt).
std::optional<BatchDistance::Walked> by_nearest_words(const Index& index, const QueryToDocument& d2,
                                                      const float* weight, std::size_t h,
                                                      const std::vector<Cursor>& cursors,
                                                      std::size_t j, std::size_t k, float ceiling,
                                                      std::span<const std::uint32_t> skip,
                                                      std::size_t& work, std::size_t budget) {
  std::vector<float> root(h, 0.0f), second(h, 0.0f);
  struct List {
    std::size_t t;
    std::span<const std::uint32_t> docs;
  };
  std::vector<List> lists;
  for (const Cursor& c : cursors) {
    if (!c.ready()) return std::nullopt;  // its nearest word not known
    const float next = c.words.size() > 1 ? std::min(c.words[1].sq, c.ring) : c.ring;
    root[c.t] = std::sqrt(c.words[0].sq);
    second[c.t] = std::sqrt(next);
    lists.push_back({c.t, index.word_postings().of(c.words[0].word)});
  }
  std::stable_sort(lists.begin(), lists.end(),
                   [](const List& a, const List& b) { return a.docs.size() < b.docs.size(); });
  const std::size_t m = lists.size();
  TopK best(k);
  const auto admits = [&](const Neighbor& b) { return b.distance < ceiling && best.accepts(b); };
  std::size_t computed = 0;
  std::vector<float> roots(h), terms(h);
  std::vector<std::size_t> at(m);
  struct Candidate {
    Neighbor bound;
    std::uint64_t held;  // bit l: holds lists[l]'s word
  };
  std::vector<Candidate> candidates;
  for (std::size_t s = 0;; ++s) {
    // Every document in none of lists [0, s) is at least this.
    roots = root;
    for (std::size_t l = 0; l < s; ++l) roots[lists[l].t] = second[lists[l].t];
    const float unmet = d2.weighted_sum(j, roots.data());
    if (!(unmet < ceiling) || (best.full() && best.worst().distance < unmet))
      return BatchDistance::Walked{best.take_sorted(), computed};
    if (s == m) return std::nullopt;
    work += lists[s].docs.size() * m;
    if (work > budget) return std::nullopt;
    candidates.clear();
    std::fill(at.begin(), at.end(), 0);
    std::size_t skip_at = 0;
    for (const std::uint32_t d : lists[s].docs) {
      while (skip_at < skip.size() && skip[skip_at] < d) ++skip_at;
      if (skip_at < skip.size() && skip[skip_at] == d) continue;
      std::uint64_t held = std::uint64_t{1} << s;
      bool before = false;
      for (std::size_t l = 0; l < m && !before; ++l)
        if (l != s && holds(lists[l].docs, at[l], d)) {
          held |= std::uint64_t{1} << l;
          before = l < s;  // met in a list taken before
        }
      if (before) continue;
      for (std::size_t l = 0; l < m; ++l)
        roots[lists[l].t] = held >> l & 1 ? root[lists[l].t] : second[lists[l].t];
      const Neighbor bound{d2.weighted_sum(j, roots.data()), d};
      if (admits(bound)) candidates.push_back({bound, held});
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.bound < b.bound; });
    for (const Candidate& c : candidates) {
      if (!admits(c.bound)) break;
      for (std::size_t t = 0; t < h; ++t) terms[t] = weight[t] > 0 ? kInf : 0.0f;
      for (std::size_t l = 0; l < m; ++l)
        if (c.held >> l & 1) terms[lists[l].t] = root[lists[l].t];
      ++computed;
      const Neighbor b{d2.finish(j, static_cast<std::size_t>(c.bound.index), terms.data()),
                       c.bound.index};
      if (admits(b)) best.push(b);
    }
  }
}

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
  // Most typed queries are answered from their words' nearest words' lists alone.
  if (auto top =
          by_nearest_words(index_, d2_, weight, h, cursors, j, k, ceiling, skip, work, budget))
    return top;

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

  // Zero-weight words add nothing to D2 (0 times a finite root): their terms stay 0. The
  // frontiers and a met document's terms are kept as roots: every sum below is weighted_sum
  // over roots, the same bits as weighted_root_sum over their squares.
  std::vector<float> front_root(h, 0.0f), terms(h);
  const auto advance = [&](const Cursor& c) { front_root[c.t] = std::sqrt(c.frontier()); };
  for (const Cursor& c : cursors) advance(c);
  thread_local Met met;
  met.start(n, weight, h, skip);
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
  const auto finish = [&](std::uint32_t s) {
    met.terms(s, terms.data());
    known(s, d2_.finish(j, met.doc[s], terms.data()));
  };
  // The documents met for some words but not all whose bounds let them in, (bound, document).
  // Each slot's bound is weighted_sum's, its terms its met distances and the frontiers: the
  // same operations in the same order, a word at a time over every slot.
  std::vector<Neighbor> partial;
  const auto gather_partial = [&] {
    partial.clear();
    const std::size_t slots = met.doc.size();
    met.bound.assign(slots, 0.0f);
    float* bound = met.bound.data();
    for (std::size_t t = 0; t < h; ++t) {
      const float f = weight[t], r = front_root[t];
      const float* x = met.root(t);
      for (std::size_t s = 0; s < slots; ++s) bound[s] += f * (x[s] < kInf ? x[s] : r);
    }
    for (std::uint32_t s = 0; s < slots; ++s)
      if (met.left[s] > 0) {
        const Neighbor b{bound[s], met.doc[s]};
        if (admits(b)) partial.push_back(b);
      }
  };
  const auto slot_of = [&](const Neighbor& b) {
    return met.slot[static_cast<std::size_t>(b.index)];
  };
  const auto walk = [&](Cursor& c) {
    const Entry e = c.words[c.next++];
    const float r = std::sqrt(e.sq);
    ++c.walked;
    const auto docs = postings.of(e.word);
    work += docs.size();
    // Each document's table entry asked for a few postings ahead: a posting list's documents
    // lie far apart in a table of every document, and each entry would wait on memory.
    constexpr std::size_t kAhead = 16;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (i + kAhead < docs.size()) __builtin_prefetch(met.slot.data() + docs[i + kAhead]);
      const std::uint32_t d = docs[i];
      std::uint32_t s = met.slot[d];
      if (s == kSkipped) continue;
      if (s == kNone) s = met.slot[d] = met.add(d, static_cast<std::uint32_t>(cursors.size()));
      float& x = met.root(c.t)[s];
      if (x < kInf || met.left[s] == 0) continue;
      x = r;  // the first met is the nearest: words come in ascending distance
      if (--met.left[s] == 0) {
        met.terms(s, terms.data());
        known(s, d2_.weighted_sum(j, terms.data()));
      }
    }
    if (!c.ready() && !c.exhausted()) select_more(c);
    advance(c);
  };

  for (;;) {
    const float T = d2_.weighted_sum(j, front_root.data());
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
      !(d2_.weighted_sum(j, front_root.data()) < kInf))
    return std::nullopt;
  return BatchDistance::Walked{best.take_sorted(), computed};
}

}  // namespace lcrwmd
