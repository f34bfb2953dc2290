#pragma once
// The files of a collection directory besides its segments (lcrwmd/collection.h):
//
//   manifest        the commit point: which segments and deletion files make the collection,
//                   as text, its last line a checksum of the lines before (Lucene's segments_N,
//                   replaced atomically instead of numbered)
//   seg-N.idx       a segment: an index file, never changed once written
//   seg-N.del-G     segment N's deleted documents as of generation G: sorted local document
//                   numbers, checksummed; a later deletion writes a new file
//   write.lock      held (flock) by the one process changing the collection
//
// Parsing checks everything a damaged or hand-edited file could get wrong and names the file
// and line (or byte) of the first problem.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lcrwmd::collection {

inline constexpr const char* kManifest = "manifest";
inline constexpr const char* kLock = "write.lock";

struct SegmentEntry {
  std::uint64_t number = 0;   // N
  std::string file;           // seg-N.idx
  std::uint64_t docs = 0;     // documents in the file, live or deleted
  std::uint64_t bytes = 0;    // the file's size
  std::string deletions;      // seg-N.del-G, or empty: none deleted
  std::uint64_t deleted = 0;  // documents it lists
};

struct Manifest {
  std::uint64_t generation = 0;              // commits so far
  std::uint64_t next_segment = 1;            // N of the next segment written
  std::string embeddings;                    // where new words' vectors come from (absolute path)
  std::uint64_t embeddings_fingerprint = 0;  // XXH3-64 of that file's bytes
  std::vector<SegmentEntry> segments;        // in document order
};

std::string format_manifest(const Manifest& m);
// `where` names the file in errors.
Manifest parse_manifest(std::string_view text, const std::string& where);

std::string segment_file(std::uint64_t n);                              // seg-000001.idx
std::string deletions_file(std::uint64_t n, std::uint64_t generation);  // seg-000001.del-000002
// Whether `name` is one of the files a collection writes (segments, deletion files, their
// temporaries): what clean-up may remove once unreferenced.
bool is_collection_file(std::string_view name);

// A deletion file's bytes: a segment of `segment_docs` documents, `deleted` ascending.
std::string format_deletions(std::uint64_t segment_docs, std::span<const std::uint32_t> deleted);
std::vector<std::uint32_t> parse_deletions(std::string_view bytes, std::uint64_t segment_docs,
                                           const std::string& where);

// XXH3-64 of a file's bytes (the embeddings' fingerprint); remembered for the process while
// the file's device, inode, size and modification time stay the same.
std::uint64_t file_fingerprint(const std::string& path);
std::string hex(std::uint64_t x);

}  // namespace lcrwmd::collection
