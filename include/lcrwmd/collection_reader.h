#pragma once
// Documents opened for searching, and a collection kept open at its last commit (Lucene's
// DirectoryReader and SearcherManager). Every front end opens its documents here: the command
// line (index files or a collection), the service and Python (a collection that changes under
// them).
//
//   CollectionReader reader("news", {});
//   std::shared_ptr<const DocumentSnapshot> s = reader.acquire();   // held for a whole search
//   s->searcher().search(s->documents().make_query_set(texts, {}), 10, {});
//   reader.refresh();   // after a commit (this process's or another's): the next acquire sees it
//
// A snapshot never changes: a search holds the one it started on, and a refresh swaps in the
// next for later searches while the earlier finish on theirs (never half of a change).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lcrwmd/collection.h"
#include "lcrwmd/index.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {

// Index files searched as shards, or a collection at one commit: its documents as one SegmentSet,
// and (on first use) a searcher over them.
class DocumentSnapshot {
 public:
  // `paths`: index files, in document order, or one collection directory (its last commit; an
  // Error where a collection is given with anything else). `verify`: the files' checksums
  // checked as they are read. `searcher`: the options of searcher().
  static std::shared_ptr<const DocumentSnapshot> open(const std::vector<std::string>& paths,
                                                      bool verify,
                                                      const SearcherOptions& searcher = {});
  // The collection's last commit after `earlier`'s (a snapshot of the same collection), sharing
  // with it what both hold: the segments' mappings and tables, and their searchers (made now).
  static std::shared_ptr<const DocumentSnapshot> reopen(const DocumentSnapshot& earlier,
                                                        bool verify);
  DocumentSnapshot(const DocumentSnapshot&) = delete;
  DocumentSnapshot& operator=(const DocumentSnapshot&) = delete;

  // The index files, or the collection's segments, as one set of documents.
  const SegmentSet& documents() const { return *documents_; }
  // The collection's commit; null for index files.
  const Collection* collection() const { return collection_ ? &*collection_ : nullptr; }
  // The collection's generation; 0 for index files.
  std::uint64_t generation() const { return collection_ ? collection_->generation() : 0; }
  // The index holding exactly the documents, numbered as documents() numbers them (one file, or
  // a collection of one segment without deletions); null otherwise.
  const Index* one_index() const;
  // A CollectionSearcher over documents(), made on first use (a GPU backend uploads then).
  const Searcher& searcher() const;
  const CollectionSearcher& collection_searcher() const;
  // Its searcher, keeping the snapshot alive while the caller holds it.
  static std::shared_ptr<const Searcher> searcher_of(
      const std::shared_ptr<const DocumentSnapshot>& s) {
    return {s, &s->searcher()};
  }

 private:
  DocumentSnapshot() = default;
  std::vector<Index> files_;
  std::optional<Collection> collection_;
  std::unique_ptr<SegmentSet> documents_;
  SearcherOptions options_;
  mutable std::once_flag made_;
  mutable std::unique_ptr<CollectionSearcher> searcher_;
};

struct CollectionReaderOptions {
  SearcherOptions searcher;  // the snapshots' searchers'
  // The first commit's files checked against their checksums as they are read.
  bool verify = true;
  // Later commits' files too (by default not: their writer checked what it wrote).
  bool verify_refreshes = false;
  // The vectors queries will be read with, checked against every segment of every commit
  // opened (check_embeddings); null: not checked. Must outlive the reader.
  const WordVectors* query_vectors = nullptr;
};

// A collection directory (or an index file, which never changes) searched at its last commit.
class CollectionReader {
 public:
  // Opens the last commit, and makes its searcher. An Error where it cannot.
  CollectionReader(std::string path, CollectionReaderOptions options);
  const std::string& path() const { return path_; }
  // The snapshot current now.
  std::shared_ptr<const DocumentSnapshot> acquire() const;
  // Opens the last commit where it is newer than the current one (and makes its searcher before
  // swapping it in, so that no search waits for it); whether it swapped. Of refreshes that race,
  // a slower one never swaps an older commit in over a newer.
  bool refresh();

 private:
  // The last commit, after `earlier` where given (sharing what it holds); its segments' vectors
  // checked against the queries' (those new since `earlier`), its searcher made.
  std::shared_ptr<const DocumentSnapshot> open(bool verify,
                                               const DocumentSnapshot* earlier = nullptr) const;
  const std::string path_;
  const CollectionReaderOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const DocumentSnapshot> current_;
};

}  // namespace lcrwmd
