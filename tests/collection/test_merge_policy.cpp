// The merge policy on lists of segments in memory (collection/merge_policy.h): what it proposes
// for a given list, and what a collection grown by adds keeps when its writer merges whatever it
// proposes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "collection/merge_policy.h"

namespace lcrwmd::collection {
namespace {

std::size_t tier(std::size_t docs) {
  std::size_t t = 0;
  for (; docs >= 10; docs /= 10) ++t;
  return t;
}

// A list of segments of `docs` live documents each, vocabularies that never overlap.
std::vector<SegmentSummary> of(std::initializer_list<std::size_t> docs) {
  std::vector<SegmentSummary> out;
  for (const std::size_t d : docs) out.push_back({d, 100});
  return out;
}

// distinct_words for vocabularies that never overlap: their sum, and how often it was asked.
struct Disjoint {
  const std::vector<SegmentSummary>* segments;
  int asked = 0;
  std::size_t operator()() {
    ++asked;
    std::size_t n = 0;
    for (const SegmentSummary& s : *segments) n += s.vocabulary;
    return n;
  }
};

std::optional<MergeCandidate> due(const std::vector<SegmentSummary>& s) {
  Disjoint distinct{&s};
  return next_merge(s, std::ref(distinct));
}

TEST(MergePolicy, TheTenNewestOfOneTierBecomeOne) {
  EXPECT_FALSE(due(of({})));
  EXPECT_FALSE(due(of({1, 1, 1, 1, 1, 1, 1, 1, 1})));  // nine: not yet
  EXPECT_EQ(due(of({1, 1, 1, 1, 1, 1, 1, 1, 1, 1})), (MergeCandidate{0, 10}));
  EXPECT_EQ(due(of({5000, 3, 1, 9, 1, 1, 2, 1, 1, 4, 1})), (MergeCandidate{1, 11}));
  // Tiers by the live documents: 9 and 10 are tiers 0 and 1.
  EXPECT_FALSE(due(of({10, 1, 1, 1, 1, 1, 1, 1, 1, 1})));
  EXPECT_EQ(due(of({10, 99, 20, 10, 11, 50, 12, 13, 14, 15})), (MergeCandidate{0, 10}));
  EXPECT_FALSE(due(of({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 10})));  // the newest is of another tier
}

TEST(MergePolicy, OverlappingVocabulariesMergeTheNewestTwo) {
  // Ten words each, all the same ten: 30 where one build would hold 10.
  std::vector<SegmentSummary> s{{500, 10}, {20, 10}, {3, 10}};
  int asked = 0;
  const auto ten = [&] {
    ++asked;
    return std::size_t{10};
  };
  EXPECT_EQ(next_merge(s, ten), (MergeCandidate{1, 3}));
  EXPECT_EQ(asked, 1);
  // Within 1.1 times the distinct words: nothing; and within 1.1 times the largest vocabulary,
  // the words are not even counted.
  EXPECT_FALSE(next_merge(std::vector<SegmentSummary>{{500, 100}, {3, 10}},
                          [] { return std::size_t{101}; }));
  asked = 0;
  EXPECT_FALSE(next_merge(std::vector<SegmentSummary>{{500, 100}, {3, 10}}, ten));
  EXPECT_EQ(asked, 0) << "summed 110 is within 1.1 x 100: no count needed";
  EXPECT_FALSE(next_merge(std::vector<SegmentSummary>{{500, 100}}, ten));
  // Not into a segment more than ten times the newer's documents (a bulk add into a large
  // collection), however much the words overlap; at ten times, yes.
  EXPECT_FALSE(next_merge(std::vector<SegmentSummary>{{1'000'000, 10}, {10'000, 10}}, ten));
  EXPECT_FALSE(next_merge(std::vector<SegmentSummary>{{101, 10}, {10, 10}}, ten));
  EXPECT_EQ(next_merge(std::vector<SegmentSummary>{{100, 10}, {10, 10}}, ten),
            (MergeCandidate{0, 2}));
  // A tier's merge comes first.
  std::vector<SegmentSummary> ten_ones(10, SegmentSummary{1, 10});
  EXPECT_EQ(next_merge(ten_ones, ten), (MergeCandidate{0, 10}));
}

// One-document adds whose words the first segment mostly holds (the vocabulary rule fires
// often): the merges rewrite a few dozen documents per add whatever the collection's size,
// never the large segment once per handful of adds (which is thousands per add here).
TEST(MergePolicy, MergesRewriteAFewDocumentsPerAddNotTheCollection) {
  for (const std::size_t first : {std::size_t{100'000}, std::size_t{1'000'000}}) {
    std::vector<SegmentSummary> s{{first, 5000}};
    std::size_t rewritten = 0;
    const auto distinct = [&] {  // every word of the small ones is also in the first
      std::size_t n = 0;
      for (const SegmentSummary& x : s) n = std::max(n, x.vocabulary);
      return n;
    };
    const std::size_t adds = 20'000;
    for (std::size_t i = 0; i < adds; ++i) {
      s.push_back({1, 50});
      while (const auto m = next_merge(s, distinct)) {
        SegmentSummary merged{0, 0};
        for (std::size_t j = m->begin; j < m->end; ++j) {
          merged.live_docs += s[j].live_docs;
          merged.vocabulary = std::max(merged.vocabulary, s[j].vocabulary);
        }
        rewritten += merged.live_docs;
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(m->begin),
                s.begin() + static_cast<std::ptrdiff_t>(m->end));
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(m->begin), merged);
      }
    }
    EXPECT_LE(rewritten, 40 * adds) << "documents rewritten for " << adds << " adds to " << first;
    EXPECT_LE(s.size(), 40u);
  }
}

// Adds followed by the merges the policy asks for (a merge's live documents the sum of its
// parts'), every document kept in order. Adds of one size keep at most nine segments a tier;
// adds of mixed sizes keep the newest ten from ever sharing a tier (only they are looked at, so
// a smaller segment behind a larger one stays as it is).
TEST(MergePolicy, AGrowingCollectionKeepsFewSegmentsPerTier) {
  std::mt19937 rng(3);
  for (const std::size_t largest_add : {std::size_t{1}, std::size_t{30}, std::size_t{2000}}) {
    std::vector<SegmentSummary> s;
    std::size_t total = 0;
    while (total < 1'000'000) {
      const std::size_t add = largest_add == 1 ? 1 : 1 + rng() % largest_add;
      total += add;
      s.push_back({add, 10});
      Disjoint distinct{&s};
      while (const auto m = next_merge(s, std::ref(distinct))) {
        ASSERT_LT(m->begin, m->end);
        ASSERT_LE(m->end, s.size());
        SegmentSummary merged{0, 10};
        for (std::size_t i = m->begin; i < m->end; ++i) merged.live_docs += s[i].live_docs;
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(m->begin),
                s.begin() + static_cast<std::ptrdiff_t>(m->end));
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(m->begin), merged);
      }
      if (s.size() >= 10) {
        const std::size_t t = tier(s.back().live_docs);
        ASSERT_FALSE(std::all_of(s.end() - 10, s.end(),
                                 [&](const SegmentSummary& x) { return tier(x.live_docs) == t; }))
            << "the newest ten share tier " << t;
      }
      if (largest_add == 1) {
        std::map<std::size_t, std::size_t> per_tier;
        for (const SegmentSummary& x : s) ++per_tier[tier(x.live_docs)];
        for (const auto& [t, n] : per_tier) ASSERT_LE(n, 9u) << "tier " << t;
      }
    }
    std::size_t kept = 0;
    for (const SegmentSummary& x : s) kept += x.live_docs;
    EXPECT_EQ(kept, total) << "adds of up to " << largest_add;
  }
}

}  // namespace
}  // namespace lcrwmd::collection
