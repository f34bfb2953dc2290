#pragma once
// Which segments an add merges, and merging them (docs/collections.md, "Costs and limits"):
// neighbouring segments only, so that the documents keep their order; the merged segment is
// what one build of their live documents gives (merge_documents).
#include <cstddef>
#include <string>

#include "collection/commit.h"

namespace lcrwmd::collection {

// Segments [b, e) replaced by one segment of their live documents, in order.
void merge_segments(const std::string& dir, State& st, std::size_t b, std::size_t e);
// Tiers: whenever the ten newest segments share a tier (the base-10 logarithm of their live
// documents), they become one of the next.
void merge_tiers(const std::string& dir, State& st);
// Vocabulary: while the segments' vocabularies add up to more than 1.1 times the distinct
// words, the newest two are merged.
void merge_overlapping(const std::string& dir, State& st);

}  // namespace lcrwmd::collection
