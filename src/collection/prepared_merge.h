#pragma once
// A merge made from one commit's segments without the writer's lock (the long part: reading
// their live documents and writing the merged index), then placed in a later commit under the
// lock, carrying over what was deleted from its segments meanwhile: how a writer merges while
// other changes commit (CollectionWriter::merge).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collection/commit.h"
#include "collection/merge_policy.h"
#include "lcrwmd/index.h"

namespace lcrwmd::collection {

struct PreparedMerge {
  std::vector<std::uint64_t> numbers;            // the segments it replaces, in order
  std::vector<std::size_t> docs;                 // the documents of each, deleted or not
  std::vector<std::vector<std::uint32_t>> seen;  // the deletions of each that it left out
  std::vector<char> image;                       // the merged segment's index file
};

// The live documents of segments [due.begin, due.end) of `st` as one segment's data
// (merge_documents).
IndexData merged_documents(const State& st, MergeCandidate due);

// Those merged, as an index image to place later (in memory: a merge made while other writers
// commit; a merge under the lock writes merged_documents straight to its file instead).
PreparedMerge prepare_merge(const State& st, MergeCandidate due);

// Places `p` in `st` (the last commit, read under the writer's lock; the commit is the
// caller's): its segments become the merged one, which carries over the deletions made in them
// since it was prepared (a segment no longer there: all its documents). False, with `st` as it
// was, where none of them is there, or another segment now lies between them (another writer
// merged some of them).
bool place_merge(const std::string& dir, State& st, const PreparedMerge& p);

}  // namespace lcrwmd::collection
