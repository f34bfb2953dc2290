// The merge policy (collection/merge_policy.h).
#include "collection/merge_policy.h"

#include <algorithm>

namespace lcrwmd::collection {
namespace {

constexpr std::size_t kMergeFactor = 10;
constexpr double kVocabularySlack = 1.1;

std::size_t tier(std::size_t docs) {
  std::size_t t = 0;
  for (; docs >= kMergeFactor; docs /= kMergeFactor) ++t;
  return t;
}

}  // namespace

std::optional<MergeCandidate> next_merge(std::span<const SegmentSummary> segments,
                                         const std::function<std::size_t()>& distinct_words) {
  const std::size_t n = segments.size();
  if (n >= kMergeFactor) {
    const std::size_t t = tier(segments[n - 1].live_docs);
    if (std::all_of(segments.end() - kMergeFactor, segments.end(),
                    [&](const SegmentSummary& s) { return tier(s.live_docs) == t; }))
      return MergeCandidate{n - kMergeFactor, n};
  }
  if (n < 2) return std::nullopt;
  // The largest vocabulary is a floor of the distinct words: within the slack of it, nothing is
  // due, and the words need not be counted (a service merging after every add).
  std::size_t summed = 0, largest = 0;
  for (const SegmentSummary& s : segments) {
    summed += s.vocabulary;
    largest = std::max(largest, s.vocabulary);
  }
  const auto over = [&](std::size_t floor) {
    return static_cast<double>(summed) > kVocabularySlack * static_cast<double>(floor);
  };
  // Not where the older of the two is more than a tier larger: that merge would be mostly a
  // rewrite of what did not change (a bulk add into a large collection); the tiers merge it.
  if (segments[n - 2].live_docs > kMergeFactor * segments[n - 1].live_docs) return std::nullopt;
  if (over(largest) && over(distinct_words())) return MergeCandidate{n - 2, n};
  return std::nullopt;
}

}  // namespace lcrwmd::collection
