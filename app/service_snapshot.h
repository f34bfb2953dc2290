#pragma once
// What `lcrwmd serve` searches at one moment: an index file, or a collection at one commit,
// its documents as one ShardSet and a searcher over them. Immutable once made: each request
// holds the snapshot it started on, so a change swaps in the next one while the requests of
// the last finish on theirs (never half of a change).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lcrwmd/collection.h"
#include "lcrwmd/index.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/sharded.h"

namespace lcrwmd::app {

struct Snapshot {
  // `path`: an index file, or a collection directory (its last commit).
  static std::shared_ptr<const Snapshot> open(const std::string& path,
                                              const SearcherOptions& options, bool verify);

  std::optional<Collection> collection;  // a collection's commit
  std::optional<Index> file;             // or an index file
  std::unique_ptr<ShardSet> documents;   // either, as one collection of documents
  std::unique_ptr<Searcher> searcher;    // over `documents`

  std::uint64_t generation() const { return collection ? collection->generation() : 0; }
  // The index holding exactly its documents, numbered as `documents` numbers them (a file, or a
  // collection of one segment without deletions); null otherwise.
  const Index* one_index() const;
};

// The snapshot's searcher, keeping the snapshot alive for as long as a search holds it.
inline std::shared_ptr<const Searcher> searcher_of(const std::shared_ptr<const Snapshot>& s) {
  return {s, s->searcher.get()};
}

}  // namespace lcrwmd::app
