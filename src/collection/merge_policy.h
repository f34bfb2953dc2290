#pragma once
// Which segments to merge (docs/collections.md, "Costs and limits"), decided on what the policy
// sees of each segment and nothing else (Lucene's MergePolicy.findMerges, tantivy's
// compute_merge_candidates): the writer merges what it proposes and asks again, since a merge
// changes what is due next (tiers cascade; a merged vocabulary is known once merged). Neighbouring
// segments only, so that the documents keep their order; a merged segment is what one build of
// their live documents gives (merge_documents).
#include <cstddef>
#include <functional>
#include <optional>
#include <span>

namespace lcrwmd::collection {

// What the policy sees of a segment.
struct SegmentSummary {
  std::size_t live_docs;   // documents not deleted
  std::size_t vocabulary;  // distinct words it holds
};

// Segments [begin, end) to become one.
struct MergeCandidate {
  std::size_t begin, end;
  bool operator==(const MergeCandidate&) const = default;
};

// The merge due next for `segments` (in document order), or none. distinct_words() counts the
// distinct words over all of them, asked only where the vocabularies overlap enough to matter
// (a merge leaves the count unchanged).
//   Tiers: a segment's tier is the base-10 logarithm of its live documents; whenever the ten
//   newest segments share a tier, they become one of the next (Lucene's log merge policy on
//   adjacent segments). Adds of one size keep at most nine segments a tier; with adds of mixed
//   sizes, a segment behind a larger one stays as it is (only the newest ten are looked at).
//   Vocabulary: a search's phase 1 runs over each segment's own words, so a word several
//   segments hold is paid for in each: while the vocabularies add up to more than 1.1 times
//   the distinct words, the newest two are merged (the newest are the small ones, whose words
//   the older ones mostly hold already), unless the older holds more than ten times the live
//   documents of the newer: a merge is never mostly a rewrite of what did not change, so that
//   each document is rewritten a few times in its life, not once per add.
std::optional<MergeCandidate> next_merge(std::span<const SegmentSummary> segments,
                                         const std::function<std::size_t()>& distinct_words);

}  // namespace lcrwmd::collection
