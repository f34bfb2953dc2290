// A commit of a collection directory (collection/commit.h): reading one, writing the next.
#include "collection/commit.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <system_error>
#include <thread>

#include "lcrwmd/atomic_file.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/error.h"
#include "lcrwmd/plural.h"
#include "util/fault_point.h"
#include "util/sorted_ids.h"

namespace lcrwmd::collection {
namespace {

void write_atomically(const std::string& path, const std::string& bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

// Removes the collection's files that `m` does not name (an interrupted change's, or an
// earlier commit's that no reader needs once it reads the new manifest; one that has them
// mapped keeps them until it lets go). Files the collection did not write are left alone.
void remove_unreferenced(const std::string& dir, const Manifest& m) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const std::string& name : names) {
    if (name == kManifest || !is_collection_file(name)) continue;
    const bool named =
        std::any_of(m.segments.begin(), m.segments.end(),
                    [&](const SegmentEntry& e) { return e.file == name || e.deletions == name; });
    if (!named) ::unlink(join(dir, name).c_str());
  }
}

}  // namespace

std::string join(const std::string& dir, const std::string& name) { return dir + "/" + name; }

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(path + ": read failed");
  out = std::move(s).str();
  return true;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": " + std::strerror(errno));
  return static_cast<std::uint64_t>(st.st_size);
}

std::string absolute(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) throw Error(path + ": " + std::strerror(errno));
  std::string out(real);
  std::free(real);
  return out;
}

namespace {

// A segment's deleted documents, as its entry names them (none without a deletion file). A file
// missing: a std::system_error (read_state reads the newer commit that removed it).
std::vector<std::uint32_t> read_deleted(const std::string& dir, const SegmentEntry& e) {
  if (e.deletions.empty()) return {};
  const std::string path = join(dir, e.deletions);
  std::string bytes;
  if (!read_file(path, bytes)) throw std::system_error(errno, std::generic_category());
  std::vector<std::uint32_t> del = parse_deletions(bytes, e.docs, path);
  if (del.size() != e.deleted)
    throw Error(path + ": " + std::to_string(del.size()) +
                " deleted documents where the manifest says " + std::to_string(e.deleted));
  return del;
}

}  // namespace

// Reads the commit the manifest names now. A file missing because a writer committed and
// removed it meanwhile: read the new commit (a reader never waits for a writer).
Manifest read_manifest(const std::string& dir, std::string* text) {
  const std::string path = join(dir, kManifest);
  std::string bytes;
  if (!read_file(path, bytes))
    throw Error(dir + ": not a collection (no " + kManifest + ": " + std::strerror(errno) + ")");
  Manifest m = parse_manifest(bytes, path);
  if (text) *text = std::move(bytes);
  return m;
}

State read_state(const std::string& dir, bool verify, Share share, std::span<const Segment> known) {
  const std::string mpath = join(dir, kManifest);
  for (int attempt = 0;; ++attempt) {
    State st;
    std::string text;
    st.manifest = read_manifest(dir, &text);
    const std::size_t n = st.manifest.segments.size();
    if (n < share.parts)
      throw Error(dir + ": a collection of " + plural(n, "segment") + " cannot be shared by " +
                  std::to_string(share.parts) + " ranks (each takes whole segments): run at most " +
                  std::to_string(n) + ", or `lcrwmd compact --index " + dir +
                  "` to make it one index that any number of ranks share");
    const std::span<const SegmentEntry> mine =
        std::span(st.manifest.segments)
            .subspan(n * share.part / share.parts,
                     n * (share.part + 1) / share.parts - n * share.part / share.parts);
    try {
      for (const SegmentEntry& e : mine) {
        const auto open = std::find_if(known.begin(), known.end(), [&](const Segment& seg) {
          return seg.number == e.number && seg.bytes == e.bytes && seg.index->n_docs() == e.docs;
        });
        if (open != known.end()) {
          Segment seg = *open;  // the same file: its mapping shared
          if (seg.deletions != e.deletions) seg.deleted = read_deleted(dir, e);
          seg.deletions = e.deletions;
          st.segments.push_back(std::move(seg));
          continue;
        }
        const std::string path = join(dir, e.file);
        if (::access(path.c_str(), F_OK) != 0)
          throw std::system_error(errno, std::generic_category());
        if (const std::uint64_t bytes = file_size(path); bytes != e.bytes)
          throw Error(path + ": " + std::to_string(bytes) + " bytes where the manifest says " +
                      std::to_string(e.bytes) + ": truncated or replaced");
        Index index = Index::load(path, verify);
        if (index.n_docs() != e.docs)
          throw Error(path + ": " + std::to_string(index.n_docs()) +
                      " documents where the manifest says " + std::to_string(e.docs));
        st.segments.push_back({.number = e.number,
                               .bytes = e.bytes,
                               .deletions = e.deletions,
                               .index = std::make_shared<Index>(std::move(index)),
                               .deleted = read_deleted(dir, e)});
      }
      st.manifest.segments.clear();  // the segments are the record now
      return st;
    } catch (const std::exception& e) {
      // A commit since the manifest was read may have removed what it named: read the new one.
      std::string now;
      if (read_file(mpath, now) && now != text && attempt < 8) continue;
      if (dynamic_cast<const std::system_error*>(&e) == nullptr) throw;
      throw Error(dir + ": a file the manifest names is missing (" + e.what() +
                  "): the collection is damaged");
    }
  }
}

namespace {

// The process a lock file names (0: none, as while one has just taken the lock, or an older
// lcrwmd holds it).
long holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::strtol(buf, nullptr, 10) : 0;
}

std::string holder_name(long pid) {
  return pid > 0 ? "process " + std::to_string(pid) : std::string("another process");
}

// Writes `text` as the lock file's contents, what a waiting writer reads; false where it could
// not, which only leaves that writer saying "another process" (the flock is what excludes).
bool name_holder(int fd, std::string_view text) {
  return ::ftruncate(fd, 0) == 0 &&
         ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

std::string seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

}  // namespace

WriterLock::WriterLock(const std::string& dir, double wait, const WaitNotice& notice) {
  const std::string path = join(dir, kLock);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error(path + ": cannot open the writer's lock: " + std::strerror(errno));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const int e = errno;
      ::close(fd_);
      throw Error(path + ": cannot lock: " + std::strerror(e));
    }
    if (std::chrono::steady_clock::now() >= until) {
      const std::string holder = holder_name(holder_pid(fd_));
      ::close(fd_);
      throw CollectionBusy(dir + ": " + holder + " is changing the collection (it holds " + path +
                           "; waited " + seconds(wait) + "); try again once it is done");
    }
    if (!told && notice && wait > 0) {
      told = true;
      // Not where the holder is this process: a service's merge committing, a short wait.
      if (const long pid = holder_pid(fd_); pid != ::getpid())
        notice(dir + ": waiting up to " + seconds(wait) + " for " + holder_name(pid) +
               ", which is changing the collection (it holds " + path + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  name_holder(fd_, std::to_string(::getpid()) + "\n");
}

WriterLock::~WriterLock() {
  name_holder(fd_, {});
  ::close(fd_);  // closing releases the lock
}

// Commits the state as the next generation, then removes what it no longer names.
std::uint64_t commit(const std::string& dir, State& st) {
  Manifest m = st.manifest;
  m.generation = st.manifest.generation + 1;
  for (const Segment& seg : st.segments)
    m.segments.push_back({.number = seg.number,
                          .file = segment_file(seg.number),
                          .docs = seg.index->n_docs(),
                          .bytes = seg.bytes,
                          .deletions = seg.deletions,
                          .deleted = seg.deleted.size()});
  write_atomically(join(dir, kManifest), format_manifest(m));
  st.manifest.generation = m.generation;
  fault_point("collection:committed");
  remove_unreferenced(dir, m);
  return m.generation;
}

namespace {

// Segment `number`, just written to `path`, mapped.
Segment written_segment(std::uint64_t number, const std::string& path) {
  const std::uint64_t bytes = file_size(path);
  fault_point("collection:segment-written");
  return {.number = number,
          .bytes = bytes,
          .deletions = {},
          .index = std::make_shared<Index>(Index::load(path, false)),
          .deleted = {}};
}

}  // namespace

// Writes `data` as the collection's next segment, mapped.
Segment write_segment(const std::string& dir, Manifest& m, const IndexData& data) {
  const std::uint64_t number = m.next_segment++;
  const std::string path = join(dir, segment_file(number));
  Index::save(data, path);
  return written_segment(number, path);
}

Segment write_segment(const std::string& dir, Manifest& m, std::span<const char> image) {
  const std::uint64_t number = m.next_segment++;
  const std::string path = join(dir, segment_file(number));
  AtomicFile file(path);
  file.write(image.data(), image.size());
  file.commit();
  return written_segment(number, path);
}

// The segment's deletions as `del` (ascending): a new deletion file, or the segment dropped
// where none of its documents is left.
void set_deleted(const std::string& dir, const Manifest& m, Segment& seg,
                 std::vector<std::uint32_t> del) {
  seg.deleted = std::move(del);  // what later merges of this change read
  if (seg.deleted.empty()) {
    seg.deletions.clear();
    return;
  }
  seg.deletions = deletions_file(seg.number, m.generation + 1);
  if (seg.live() > 0)
    write_atomically(join(dir, seg.deletions), format_deletions(seg.index->n_docs(), seg.deleted));
  fault_point("collection:deletions-written");
}

// Drops the segments none of whose documents is live.
void drop_empty(State& st) {
  std::erase_if(st.segments, [](const Segment& seg) { return seg.live() == 0; });
}

// Appends a segment of `data` to the state (written, then mapped).
void append_segment(const std::string& dir, State& st, const IndexData& data) {
  st.segments.push_back(write_segment(dir, st.manifest, data));
}

// The embeddings to read new words from: `given` (or the recorded path), checked to be the
// recorded file's bytes.
std::string checked_embeddings(const Manifest& m, const std::string& given) {
  const std::string path = given.empty() ? m.embeddings : given;
  std::uint64_t fp = 0;
  try {
    fp = file_fingerprint(path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (the collection's embeddings" +
                (given.empty() ? ", as recorded; give --embeddings" : "") + ")");
  }
  if (fp != m.embeddings_fingerprint)
    throw Error(path + ": not the embeddings this collection was built from (" + m.embeddings +
                ", fingerprint " + hex(m.embeddings_fingerprint) + "; this file's is " + hex(fp) +
                "): its words' vectors would disagree");
  return path;
}

std::optional<Place> find_live(const State& st, std::string_view id) {
  for (std::size_t s = st.segments.size(); s-- > 0;)
    if (const std::optional<std::uint32_t> doc = st.segments[s].find_live(id))
      return Place{static_cast<std::uint32_t>(s), *doc};
  return std::nullopt;
}

// Deletes `places` (each live) from their segments: new deletion files.
void delete_places(const std::string& dir, State& st, const std::vector<Place>& places) {
  std::vector<std::vector<std::uint32_t>> add(st.segments.size());
  for (const Place& p : places) add[p.segment].push_back(p.doc);
  for (std::size_t s = 0; s < add.size(); ++s) {
    if (add[s].empty()) continue;
    std::vector<std::uint32_t> del = st.segments[s].deleted;
    del.insert(del.end(), add[s].begin(), add[s].end());
    std::sort(del.begin(), del.end());
    del.erase(std::unique(del.begin(), del.end()), del.end());
    set_deleted(dir, st.manifest, st.segments[s], std::move(del));
  }
}

}  // namespace lcrwmd::collection
