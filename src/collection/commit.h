#pragma once
// One commit of a collection directory (collection_files.h has its files): the state a commit
// names, read back and checked; the writer's lock; and the steps of the next commit (new
// segments, new deletion files, then the manifest, then clean-up), each file durable before
// the manifest that names it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collection/collection_files.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/index.h"

namespace lcrwmd::collection {

std::string join(const std::string& dir, const std::string& name);
// Reads a whole file; false where it cannot be opened (errno says why).
bool read_file(const std::string& path, std::string& out);
std::uint64_t file_size(const std::string& path);
std::string absolute(const std::string& path);

// The manifest of the last commit, checked (text: its bytes).
Manifest read_manifest(const std::string& dir, std::string* text = nullptr);

// A commit read back: the manifest's fields (its segment list left empty: `segments` is what the
// next commit writes it from) and its segments, each one record (lcrwmd/collection.h).
struct State {
  Manifest manifest;
  std::vector<Segment> segments;
};

// The commit the manifest names now, every file checked (verify: the segments' checksums too).
// A file missing because a writer committed and removed it meanwhile: the new commit is read (a
// reader never waits for a writer). share: only share.part of share.parts runs of its segments
// (whole segments, in order; an Error where there are fewer segments than parts). known: segments
// open already (an earlier commit's): those it still names are shared, not opened again, and
// their deletions read again only where their deletion file is another (Lucene's
// openIfChanged), so that reading a commit costs what changed since `known`'s.
struct Share {
  std::size_t part = 0, parts = 1;
};
State read_state(const std::string& dir, bool verify, Share share = {},
                 std::span<const Segment> known = {});

// The writer's lock: flock on write.lock, which names its holder's process while held. Polled
// until `wait` seconds have passed, then CollectionBusy naming the holder; a writer that has
// to wait is told once, through `notice` where given, whom it waits for and how long.
class WriterLock {
 public:
  WriterLock(const std::string& dir, double wait, const WaitNotice& notice = {});
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  int fd_ = -1;
};

// Commits the state as the next generation (its manifest, written from its segments, replaces
// the last atomically), then removes what it no longer names. Returns the generation.
std::uint64_t commit(const std::string& dir, State& st);

// Writes `data` as the collection's next segment (numbered from the state's manifest), mapped.
Segment write_segment(const std::string& dir, Manifest& m, const IndexData& data);
// The same from an index file's bytes (io::index_image), made before the writer's lock.
Segment write_segment(const std::string& dir, Manifest& m, std::span<const char> image);
// Appends a segment of `data` to the state (written, then mapped).
void append_segment(const std::string& dir, State& st, const IndexData& data);
// Segment `seg`'s deletions as `del` (ascending), as of the next commit after `m`'s: a new
// deletion file, or, where none of its documents is left, nothing (drop_empty then drops it).
void set_deleted(const std::string& dir, const Manifest& m, Segment& seg,
                 std::vector<std::uint32_t> del);
// Drops the segments none of whose documents is live.
void drop_empty(State& st);

// The embeddings to read new words from: `given` (or the recorded path), checked to be the
// recorded file's bytes.
std::string checked_embeddings(const Manifest& m, const std::string& given);

// Where a live id is: segment and document.
struct Place {
  std::uint32_t segment, doc;
};
// The live document with this id (a lookup in each segment's id table, the newest first).
std::optional<Place> find_live(const State& st, std::string_view id);
// Deletes `places` (each live) from their segments: new deletion files, and the state's lists
// (which the same change's merges read).
void delete_places(const std::string& dir, State& st, const std::vector<Place>& places);

}  // namespace lcrwmd::collection
