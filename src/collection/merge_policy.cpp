// The merge policy (collection/merge_policy.h).
#include "collection/merge_policy.h"

#include <algorithm>

#include "util/sorted_ids.h"

namespace lcrwmd::collection {
namespace {

// Every word of the state's segments.
WordSet all_words(const State& st) {
  WordSet words;
  for (const Index& seg : st.segments)
    for (std::size_t u = 0; u < seg.vocab_size(); ++u) words.emplace(seg.word(u));
  return words;
}

// The tiered merge policy (Lucene's log merge policy, on adjacent segments so that the
// documents keep their order): a segment's tier is log10 of its live documents; whenever the
// kMergeFactor newest segments share a tier, they become one segment of the next. A collection
// of N documents grown by adds of any size keeps at most kMergeFactor - 1 segments per tier.
constexpr std::size_t kMergeFactor = 10;

std::size_t tier(std::size_t docs) {
  std::size_t t = 0;
  for (; docs >= kMergeFactor; docs /= kMergeFactor) ++t;
  return t;
}

// A search's phase 1 runs over each segment's own vocabulary, so a word several segments hold is
// paid for in each: after the tiers, while the segments' vocabularies add up to more than
// kVocabularySlack times the distinct words, the newest two segments are merged (the newest
// are the small ones, whose words the older ones mostly hold already). A search's phase 1
// over the collection then costs at most that much more than over one build's index.
constexpr double kVocabularySlack = 1.1;

}  // namespace

// Segments [b, e) replaced by one segment of their live documents, in order (merge_documents).
void merge_segments(const std::string& dir, State& st, std::size_t b, std::size_t e) {
  std::vector<const Index*> parts;
  std::vector<std::vector<std::size_t>> live;
  for (std::size_t s = b; s < e; ++s) {
    parts.push_back(&st.segments[s]);
    std::vector<std::size_t>& kept = live.emplace_back();
    for_each_kept(st.segments[s].n_docs(), st.deleted[s],
                  [&](std::size_t i) { kept.push_back(i); });
  }
  const IndexData merged = merge_documents(parts, live);
  const SegmentEntry entry = write_segment(dir, st.manifest, merged);
  const auto at = [](auto& v, std::size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  st.manifest.segments.erase(at(st.manifest.segments, b), at(st.manifest.segments, e));
  st.manifest.segments.insert(at(st.manifest.segments, b), entry);
  st.segments.erase(at(st.segments, b), at(st.segments, e));
  st.segments.insert(at(st.segments, b), Index::load(join(dir, entry.file), false));
  st.deleted.erase(at(st.deleted, b), at(st.deleted, e));
  st.deleted.insert(at(st.deleted, b), std::vector<std::uint32_t>());
}

void merge_tiers(const std::string& dir, State& st) {
  for (;;) {
    const std::size_t n = st.segments.size();
    if (n < kMergeFactor) return;
    const std::size_t t = tier(live_docs(st, n - 1));
    for (std::size_t s = n - kMergeFactor; s < n; ++s)
      if (tier(live_docs(st, s)) != t) return;
    merge_segments(dir, st, n - kMergeFactor, n);
  }
}

void merge_overlapping(const std::string& dir, State& st) {
  // The largest vocabulary is a floor of the distinct words: within the slack of it, nothing
  // is due, and the words need not be counted (a service merging after every add).
  std::size_t summed = 0, largest = 0;
  for (const Index& seg : st.segments) {
    summed += seg.vocab_size();
    largest = std::max(largest, seg.vocab_size());
  }
  if (static_cast<double>(summed) <= kVocabularySlack * static_cast<double>(largest)) return;
  const auto distinct = static_cast<double>(all_words(st).size());
  for (;;) {
    const std::size_t n = st.segments.size();
    summed = 0;
    for (const Index& seg : st.segments) summed += seg.vocab_size();
    if (n < 2 || static_cast<double>(summed) <= kVocabularySlack * distinct) return;
    merge_segments(dir, st, n - 2, n);
  }
}

}  // namespace lcrwmd::collection
