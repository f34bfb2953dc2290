#pragma once
// Which segments an add merges, and merging them (docs/collections.md, "Costs and limits"):
// neighbouring segments only, so that the documents keep their order; the merged segment is
// what one build of their live documents gives (merge_documents).
#include <cstddef>
#include <optional>
#include <string>

#include "collection/commit.h"
#include "lcrwmd/embeddings.h"

namespace lcrwmd::collection {

// The words' order for merges (their rows in the embeddings file), read once per change and
// only where a merge needs it.
class WordOrder {
 public:
  // The collection's file (checked_embeddings(m, given)), checked when first needed; or
  // `loaded`, that file in memory (CollectionWriter::use_embeddings).
  WordOrder(const Manifest& m, std::string given, const Embeddings* loaded)
      : manifest_(m), path_(std::move(given)), loaded_(loaded) {}
  const Embeddings& of(const State& st);

 private:
  const Manifest& manifest_;
  std::string path_;
  const Embeddings* loaded_;
  std::optional<Embeddings> order_;
};

// Segments [b, e) replaced by one segment of their live documents, in order.
void merge_segments(const std::string& dir, State& st, std::size_t b, std::size_t e,
                    WordOrder& order);
// Tiers: whenever the ten newest segments share a tier (the base-10 logarithm of their live
// documents), they become one of the next.
void merge_tiers(const std::string& dir, State& st, WordOrder& order);
// Vocabulary: while the segments' vocabularies add up to more than 1.1 times the distinct
// words, the newest two are merged.
void merge_overlapping(const std::string& dir, State& st, WordOrder& order);

}  // namespace lcrwmd::collection
