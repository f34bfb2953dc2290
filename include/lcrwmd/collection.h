#pragma once
// A collection that changes: documents added, replaced and deleted without a rebuild, each
// change durable once it returns, searchable by the next search. A directory of immutable
// segments (index files, each with its own vocabulary, searched together as a SegmentSet's
// shards), per-segment deletion files and a manifest naming them, replaced atomically as the
// commit (Lucene's design; the files: src/collection/collection_files.h):
//
//   Collection::create("news", build_index_data(emb, docs, {}), "vectors.bin");
//   CollectionWriter w("news");
//   w.add(read_tsv("today.tsv"));            // new ids added, known ids replaced
//   w.remove({"doc-17"});
//   const Collection c = Collection::open("news");
//   const SegmentSet live = c.documents();     // the live documents, in collection order
//   CollectionSearcher s(live, {});
//
// What it answers: the neighbours and distances one build of its live documents would, in
// their order (the segments' in order, each segment's own in order; a replaced document moves
// to the end, where its new version was added). Document frequencies (BM25's term weights,
// --query-weights idf) are always the live documents': a delete takes its document out of them
// at once, an add puts its documents in. Documents weighted by TF-IDF depend on every other
// document, so a collection's documents are TF-weighted (the default): create() refuses TF-IDF.
//
// Durability: a change writes its new files (each synced, renamed into place, its directory
// synced), then the manifest the same way; the manifest's rename is the commit. A change
// stopped at any point (kill -9, a power cut, a full disk) leaves the collection as it was
// before it or as after it, never between; files of an interrupted change are removed by the
// next one. One process changes a collection at a time (a lock file); readers never wait.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/segments.h"

namespace lcrwmd {

namespace collection {
struct State;  // src/collection/commit.h
}

// One segment of a commit, in one record: its file's number and size, its deletion file, its
// documents (mapped) and which of them are deleted. A segment's file never changes once written
// (its number is never reused), so the commits that name it share one mapping of it, with what
// was built from it on first use (its id table, word map, a searcher's uploads).
struct Segment {
  std::uint64_t number = 0;            // its file is seg-N.idx
  std::uint64_t bytes = 0;             // that file's size
  std::string deletions;               // its deletion file (seg-N.del-G), or empty: none deleted
  std::shared_ptr<Index> index;        // its documents, live or deleted
  std::vector<std::uint32_t> deleted;  // which are deleted: its own numbers, ascending
  std::size_t live() const { return index->n_docs() - deleted.size(); }
  // Its document with this id, where it is live.
  std::optional<std::uint32_t> find_live(std::string_view id) const;
};

class Collection {
 public:
  // Whether `path` is a collection directory (holds a manifest).
  static bool exists(const std::string& path);
  // The collection's state at its last commit, every file checked (verify: the segments'
  // checksums too); an Error naming the file and what is wrong with it.
  static Collection open(const std::string& path, bool verify = true);
  // Part `part` of `parts` of it: a contiguous run of its segments (whole segments, deletions
  // and all), what one of mpirun's ranks searches (RankShards); its documents() are the run's.
  // An Error where it has fewer segments than parts.
  static Collection open_share(const std::string& path, std::size_t part, std::size_t parts,
                               bool verify = true);
  // Its last commit again, sharing with this one the segments both name (their mappings and what
  // was built from them): a reopen costs what the commits since this one changed (Lucene's
  // openIfChanged). verify: the new segments' checksums checked.
  Collection reopen(bool verify = false) const;
  // The generation of its last commit (its manifest alone read): whether to open it again.
  static std::uint64_t last_generation(const std::string& path);
  // A new collection in `dir` (absent, or an empty directory) holding `first`'s documents. New
  // words of later adds take their vectors from `embeddings`, recorded by path and by a
  // fingerprint of its bytes (adds refuse another file). An Error for a TF-IDF index or a shard.
  static void create(const std::string& dir, const IndexData& first, const std::string& embeddings);

  Collection(Collection&&) noexcept;
  Collection& operator=(Collection&&) noexcept;
  ~Collection();

  const std::string& path() const { return path_; }
  std::uint64_t generation() const { return generation_; }  // commits so far
  std::size_t n_segments() const { return segments_.size(); }
  std::span<const Segment> segments() const { return segments_; }
  const Index& segment(std::size_t s) const { return *segments_[s].index; }
  // Segment s's deleted documents (its own numbers, ascending).
  std::span<const std::uint32_t> deleted(std::size_t s) const { return segments_[s].deleted; }
  std::size_t n_docs() const { return live_; }  // live documents
  std::size_t n_deleted() const;                // deleted, until a compaction drops them
  const std::string& embeddings() const { return embeddings_; }
  std::uint64_t embeddings_fingerprint() const { return fingerprint_; }
  // An Error where `path` is not the embeddings file the collection records (by its bytes'
  // fingerprint): what adds would refuse.
  void check_embeddings(const std::string& path) const;

  // The live documents as one SegmentSet (for CollectionSearcher), referring to this collection;
  // `earlier`: the set of an earlier commit, whose segments this one shares (reopen) are not
  // checked again.
  SegmentSet documents(const SegmentSet* earlier = nullptr) const;
  // Whether it is one segment without deletions: one index file (segment(0)) holds exactly
  // its documents, for what reads a single index.
  bool is_one_index() const { return segments_.size() == 1 && segments_[0].deleted.empty(); }
  // The same of its last commit, from its manifest alone.
  static bool holds_one_index(const std::string& path);

 private:
  Collection(std::string path, collection::State st);  // a commit read (collection/commit.h)
  std::string path_, embeddings_;
  std::uint64_t generation_ = 0, fingerprint_ = 0;
  std::size_t live_ = 0;
  std::vector<Segment> segments_;
};

// An index file, or a collection that is one index (Collection::is_one_index): its segment.
// For what reads a single index; a collection of several segments or with deletions is an
// Error saying to compact it.
Index load_index(const std::string& path, bool verify = true);
// That Error's words: the collection, what it holds, and how to make it one index.
std::string not_one_index(const std::string& path, std::size_t segments, std::size_t deleted);

// Another process held the collection's writer lock for longer than the writer waits.
struct CollectionBusy : Error {
  using Error::Error;
};
// An add none of whose documents kept a word (with an embedding, not a stop word) and none of
// which replaces one: nothing to commit.
struct NothingToAdd : Error {
  using Error::Error;
};

// What one change did.
struct CollectionChange {
  std::uint64_t generation = 0;           // the collection's, after it
  std::size_t added = 0;                  // documents written (replacements included)
  std::size_t replaced = 0;               // of those, ids that were live before
  std::vector<std::string> replaced_ids;  // add: those ids, in the order of the documents given
  std::size_t deleted = 0;                // delete: documents deleted
  std::vector<std::string> not_found;     // delete: ids no live document has
  std::size_t segments = 0;               // segments after it
  std::size_t merges = 0;                 // merge: merges committed
  TextReport report;                      // add: what reading the documents kept and dropped
};

// Told once where a change waits for another process's (the message names it and the wait).
using WaitNotice = std::function<void(const std::string& message)>;

// Changes a collection: each call takes the writer's lock (waiting up to wait_seconds for
// another writer, then an Error naming the lock), reads the last commit, writes the change
// (an add: with the merges it calls for) and commits it, then removes the files no commit
// refers to.
class CollectionWriter {
 public:
  // merge: after each add, merge segments by the merge policy (docs/collections.md: tiers, and
  // the segments' vocabularies within 1.1 times the distinct words); false leaves merging to
  // merge() (a service, merging in the background) or compact() (a bulk load of many adds,
  // compacted once at its end).
  explicit CollectionWriter(std::string dir, double wait_seconds = 30, bool merge = true);

  // Adds take new words' vectors from `loaded` instead of reading the file each time: a
  // long-lived writer's (a service's). `loaded` must give every word the recorded file gives
  // (open_word_vectors(path) read whole) and outlive the writer; an Error (at the next add)
  // where its source is not the recorded file.
  void use_embeddings(const WordVectors& loaded) { loaded_ = &loaded; }
  // Where a change has to wait for another process's, `notice` is told whom it waits for (the
  // command line prints it, a service logs it).
  void on_wait(WaitNotice notice) { on_wait_ = std::move(notice); }

  // Adds documents (an id given twice: an Error naming both lines); a document whose id is
  // live already replaces it. A document left with no word is not indexed (the report names
  // it), though it still replaces. embeddings: the file the collection records or a copy of
  // it (another file: an Error); empty: the recorded path.
  CollectionChange add(const std::vector<RawDocument>& docs, const std::string& embeddings = {});
  // Deletes the live documents with these ids (those without one are listed in not_found).
  CollectionChange remove(const std::vector<std::string>& ids);
  // Merges what the merge policy calls for now (what an add of a merging writer would have),
  // each merge one commit; none where nothing is due (the generation stays). Each is made
  // without the writer's lock, which only its commit takes: other writers' changes commit
  // meanwhile, and deletions they make in the merging segments carry over to the merged one.
  CollectionChange merge();
  // Rewrites the live documents as one segment: what one build of them gives, byte for byte.
  CollectionChange compact();

 private:
  // Commits `st` (collection/commit.h) and keeps its segments open for the next change.
  std::uint64_t committed(collection::State& st);

  std::string dir_;
  double wait_;
  bool merge_;
  const WordVectors* loaded_ = nullptr;
  WaitNotice on_wait_;
  // The segments of the last commit this writer made or read, mapped: a change opens only those
  // committed since (by another writer) and those it writes, and their id tables are built once.
  std::vector<Segment> known_;
};

}  // namespace lcrwmd
