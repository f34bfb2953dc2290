#pragma once
// What `lcrwmd serve` searches at one moment: an index file, or a collection at one commit,
// its documents as one ShardSet and a searcher over them. Immutable once made: each request
// holds the snapshot it started on, so a change swaps in the next one while the requests of
// the last finish on theirs (never half of a change).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

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

// The snapshot being served, swapped whole: a request takes the one current as it starts.
class ServedSnapshot {
 public:
  ServedSnapshot(std::string path, const SearcherOptions& options, bool verify)
      : path_(std::move(path)),
        options_(options),
        current_(Snapshot::open(path_, options, verify)) {}
  std::shared_ptr<const Snapshot> get() const {
    const std::lock_guard lock(mutex_);
    return current_;
  }
  // Serves the collection's last commit, where it is newer than the one served (its files
  // read without checksums: this process wrote them, or another writer that checked its own).
  void refresh();

 private:
  const std::string path_;
  const SearcherOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Snapshot> current_;
};

// The snapshot's searcher, keeping the snapshot alive for as long as a search holds it.
inline std::shared_ptr<const Searcher> searcher_of(const std::shared_ptr<const Snapshot>& s) {
  return {s, s->searcher.get()};
}

}  // namespace lcrwmd::app
