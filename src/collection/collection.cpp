// Collection and CollectionWriter (lcrwmd/collection.h): reading a commit, and changing one.
#include "lcrwmd/collection.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "collection/collection_files.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "lcrwmd/string_map.h"
#include "lcrwmd/text.h"
#include "util/fault_point.h"

namespace lcrwmd {

using namespace collection;

namespace {

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

// A commit read back: the manifest and its files.
struct State {
  Manifest manifest;
  std::vector<Index> segments;
  std::vector<std::vector<std::uint32_t>> deleted;
};

// Reads the commit the manifest names now. A file missing because a writer committed and
// removed it meanwhile: read the new commit (a reader never waits for a writer).
State read_state(const std::string& dir, bool verify) {
  for (int attempt = 0;; ++attempt) {
    State st;
    const std::string mpath = join(dir, kManifest);
    std::string text;
    if (!read_file(mpath, text))
      throw Error(dir + ": not a collection (no " + kManifest + ": " + std::strerror(errno) + ")");
    st.manifest = parse_manifest(text, mpath);
    try {
      for (const SegmentEntry& e : st.manifest.segments) {
        const std::string path = join(dir, e.file);
        if (::access(path.c_str(), F_OK) != 0)
          throw std::system_error(errno, std::generic_category());
        if (const std::uint64_t bytes = file_size(path); bytes != e.bytes)
          throw Error(path + ": " + std::to_string(bytes) + " bytes where the manifest says " +
                      std::to_string(e.bytes) + ": truncated or replaced");
        st.segments.push_back(Index::load(path, verify));
        if (st.segments.back().n_docs() != e.docs)
          throw Error(path + ": " + std::to_string(st.segments.back().n_docs()) +
                      " documents where the manifest says " + std::to_string(e.docs));
        std::vector<std::uint32_t> del;
        if (!e.deletions.empty()) {
          const std::string dpath = join(dir, e.deletions);
          std::string bytes;
          if (!read_file(dpath, bytes)) throw std::system_error(errno, std::generic_category());
          del = parse_deletions(bytes, e.docs, dpath);
          if (del.size() != e.deleted)
            throw Error(dpath + ": " + std::to_string(del.size()) +
                        " deleted documents where the manifest says " + std::to_string(e.deleted));
        }
        st.deleted.push_back(std::move(del));
      }
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

// The writer's lock: flock on write.lock, polled until `wait` seconds have passed.
class WriterLock {
 public:
  WriterLock(const std::string& dir, double wait) {
    const std::string path = join(dir, kLock);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(path + ": cannot open the writer's lock: " + std::strerror(errno));
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= until) {
        ::close(fd_);
        throw Error(dir + ": another process is changing the collection (it holds " + path +
                    "); try again once it is done");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~WriterLock() { ::close(fd_); }  // closing releases the lock
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  int fd_ = -1;
};

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

// Commits `m` as the next generation, then removes what it no longer names.
std::uint64_t commit(const std::string& dir, Manifest& m) {
  ++m.generation;
  write_atomically(join(dir, kManifest), format_manifest(m));
  fault_point("collection:committed");
  remove_unreferenced(dir, m);
  return m.generation;
}

// Writes `data` as the collection's next segment; its manifest entry.
SegmentEntry write_segment(const std::string& dir, Manifest& m, const IndexData& data) {
  SegmentEntry e;
  e.file = segment_file(m.next_segment++);
  const std::string path = join(dir, e.file);
  Index::save(data, path);
  e.docs = data.ids.size();
  e.bytes = file_size(path);
  fault_point("collection:segment-written");
  return e;
}

// Segment s's deletions as `del` (ascending): a new deletion file, or the segment dropped
// where none of its documents is left.
void set_deleted(const std::string& dir, Manifest& m, std::size_t s,
                 const std::vector<std::uint32_t>& del) {
  SegmentEntry& e = m.segments[s];
  e.deleted = del.size();
  if (del.empty()) {
    e.deletions.clear();
    return;
  }
  e.deletions = deletions_file(std::stoull(e.file.substr(4)), m.generation + 1);
  if (del.size() < e.docs) write_atomically(join(dir, e.deletions), format_deletions(e.docs, del));
  fault_point("collection:deletions-written");
}

// Drops the segments none of whose documents is live.
void drop_empty(State& st) {
  for (std::size_t s = st.segments.size(); s-- > 0;)
    if (st.manifest.segments[s].deleted == st.manifest.segments[s].docs) {
      st.manifest.segments.erase(st.manifest.segments.begin() + static_cast<std::ptrdiff_t>(s));
      st.segments.erase(st.segments.begin() + static_cast<std::ptrdiff_t>(s));
      st.deleted.erase(st.deleted.begin() + static_cast<std::ptrdiff_t>(s));
    }
}

// Appends a segment of `data` to the state (written, then mapped).
void append_segment(const std::string& dir, State& st, const IndexData& data) {
  st.manifest.segments.push_back(write_segment(dir, st.manifest, data));
  st.segments.push_back(Index::load(join(dir, st.manifest.segments.back().file), false));
  st.deleted.emplace_back();
}

std::size_t live_docs(const State& st, std::size_t s) {
  return st.segments[s].n_docs() - st.deleted[s].size();
}

// Every word of the state's segments.
WordSet all_words(const State& st) {
  WordSet words;
  for (const Index& seg : st.segments)
    for (std::size_t u = 0; u < seg.vocab_size(); ++u) words.emplace(seg.word(u));
  return words;
}

// The words' order for merges (their rows in the embeddings file), read once per change.
class WordOrder {
 public:
  explicit WordOrder(std::string embeddings) : path_(std::move(embeddings)) {}
  const Embeddings& of(const State& st) {
    if (!order_) {
      const WordSet words = all_words(st);
      order_ = Embeddings::load(path_, &words);
    }
    return *order_;
  }

 private:
  std::string path_;
  std::optional<Embeddings> order_;
};

// Segments [b, e) replaced by one segment of their live documents, in order (merge_documents).
void merge_segments(const std::string& dir, State& st, std::size_t b, std::size_t e,
                    WordOrder& order) {
  std::vector<const Index*> parts;
  std::vector<std::vector<std::size_t>> live;
  for (std::size_t s = b; s < e; ++s) {
    parts.push_back(&st.segments[s]);
    live.emplace_back();
    const std::vector<std::uint32_t>& del = st.deleted[s];
    for (std::size_t i = 0, d = 0; i < st.segments[s].n_docs(); ++i) {
      if (d < del.size() && del[d] == i) {
        ++d;
        continue;
      }
      live.back().push_back(i);
    }
  }
  const IndexData merged = merge_documents(parts, live, order.of(st));
  const SegmentEntry entry = write_segment(dir, st.manifest, merged);
  const auto at = [](auto& v, std::size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  st.manifest.segments.erase(at(st.manifest.segments, b), at(st.manifest.segments, e));
  st.manifest.segments.insert(at(st.manifest.segments, b), entry);
  st.segments.erase(at(st.segments, b), at(st.segments, e));
  st.segments.insert(at(st.segments, b), Index::load(join(dir, entry.file), false));
  st.deleted.erase(at(st.deleted, b), at(st.deleted, e));
  st.deleted.insert(at(st.deleted, b), std::vector<std::uint32_t>());
}

// The tiered merge policy (Lucene's log merge policy, on adjacent segments so that the
// documents keep their order): a segment's tier is log10 of its live documents; whenever the
// kMergeFactor newest segments share a tier, they become one segment of the next. A collection
// of N documents grown by adds of any size keeps at most kMergeFactor - 1 segments per tier.
constexpr std::size_t kMergeFactor = 10;

std::size_t tier(std::size_t docs) {
  std::size_t t = 0;
  for (; docs >= kMergeFactor; docs /= kMergeFactor) ++t;
  return t;
}

void merge_tiers(const std::string& dir, State& st, WordOrder& order) {
  for (;;) {
    const std::size_t n = st.segments.size();
    if (n < kMergeFactor) return;
    const std::size_t t = tier(live_docs(st, n - 1));
    for (std::size_t s = n - kMergeFactor; s < n; ++s)
      if (tier(live_docs(st, s)) != t) return;
    merge_segments(dir, st, n - kMergeFactor, n, order);
  }
}

// A search's phase 1 runs over each segment's own vocabulary, so a word several segments hold is
// paid for in each: after the tiers, while the segments' vocabularies add up to more than
// kVocabularySlack times the distinct words, the newest two segments are merged (the newest
// are the small ones, whose words the older ones mostly hold already). Searching the
// collection then costs at most about that much more than one build's index.
constexpr double kVocabularySlack = 1.1;

void merge_overlapping(const std::string& dir, State& st, WordOrder& order) {
  const auto distinct = static_cast<double>(all_words(st).size());
  for (;;) {
    const std::size_t n = st.segments.size();
    std::size_t summed = 0;
    for (const Index& seg : st.segments) summed += seg.vocab_size();
    if (n < 2 || static_cast<double>(summed) <= kVocabularySlack * distinct) return;
    merge_segments(dir, st, n - 2, n, order);
  }
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

// Where each live id is: segment and document.
struct Place {
  std::uint32_t segment, doc;
};
StringMap<Place> live_ids(const State& st) {
  StringMap<Place> ids;
  for (std::size_t s = 0; s < st.segments.size(); ++s) {
    const std::vector<std::uint32_t>& del = st.deleted[s];
    for (std::size_t i = 0, d = 0; i < st.segments[s].n_docs(); ++i) {
      if (d < del.size() && del[d] == i) {
        ++d;
        continue;
      }
      ids.insert_or_assign(std::string(st.segments[s].doc_id(i)),
                           Place{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(i)});
    }
  }
  return ids;
}

// Deletes `places` (each live) from their segments: new deletion files.
void delete_places(const std::string& dir, State& st, const std::vector<Place>& places) {
  std::vector<std::vector<std::uint32_t>> add(st.segments.size());
  for (const Place& p : places) add[p.segment].push_back(p.doc);
  for (std::size_t s = 0; s < add.size(); ++s) {
    if (add[s].empty()) continue;
    std::vector<std::uint32_t> del = st.deleted[s];
    del.insert(del.end(), add[s].begin(), add[s].end());
    std::sort(del.begin(), del.end());
    del.erase(std::unique(del.begin(), del.end()), del.end());
    set_deleted(dir, st.manifest, s, del);
    st.deleted[s] = std::move(del);  // what later merges of this change read
  }
}

}  // namespace

bool Collection::exists(const std::string& path) {
  struct stat st {};
  return ::stat(join(path, kManifest).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::uint64_t Collection::last_generation(const std::string& path) {
  const std::string mpath = join(path, kManifest);
  std::string text;
  if (!read_file(mpath, text))
    throw Error(path + ": not a collection (no " + kManifest + ": " + std::strerror(errno) + ")");
  return parse_manifest(text, mpath).generation;
}

Collection Collection::open(const std::string& path, bool verify) {
  State st = read_state(path, verify);
  Collection c;
  c.path_ = path;
  c.embeddings_ = st.manifest.embeddings;
  c.generation_ = st.manifest.generation;
  c.fingerprint_ = st.manifest.embeddings_fingerprint;
  c.segments_ = std::move(st.segments);
  c.deleted_ = std::move(st.deleted);
  for (std::size_t s = 0; s < c.segments_.size(); ++s)
    c.live_ += c.segments_[s].n_docs() - c.deleted_[s].size();
  return c;
}

void Collection::create(const std::string& dir, const IndexData& first,
                        const std::string& embeddings) {
  if (first.weighting != Weighting::tf)
    throw Error(dir +
                ": a collection's documents are TF-weighted (TF-IDF weights every document "
                "by all the others, which each change would alter): build with TF "
                "weighting");
  if (first.idf_docs != 0 && first.idf_docs != first.ids.size())
    throw Error(dir + ": a shard of a larger build cannot start a collection");
  if (embeddings.find('\n') != std::string::npos)
    throw Error(embeddings + ": a path with a line break");
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw Error(dir + ": cannot create the collection's directory: " + std::strerror(errno));
  if (DIR* d = ::opendir(dir.c_str())) {
    bool empty = true;
    while (const dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    ::closedir(d);
    if (!empty) throw Error(dir + ": not empty: a new collection needs a directory of its own");
  } else {
    throw Error(dir + ": not a directory");
  }
  const WriterLock lock(dir, 0);
  Manifest m;
  m.embeddings = absolute(embeddings);
  m.embeddings_fingerprint = file_fingerprint(m.embeddings);
  m.segments.push_back(write_segment(dir, m, first));
  commit(dir, m);
}

Index load_index(const std::string& path, bool verify) {
  if (!Collection::exists(path)) return Index::load(path, verify);
  State st = read_state(path, verify);
  if (st.segments.size() != 1 || !st.deleted[0].empty())
    throw Error(path + ": a collection of " + std::to_string(st.segments.size()) +
                " segments with deleted documents; this reads one index: `lcrwmd compact "
                "--index " +
                path + "` makes it one");
  return std::move(st.segments[0]);
}

Collection::Collection(Collection&&) noexcept = default;
Collection& Collection::operator=(Collection&&) noexcept = default;
Collection::~Collection() = default;

std::size_t Collection::n_deleted() const {
  std::size_t n = 0;
  for (const auto& d : deleted_) n += d.size();
  return n;
}

ShardSet Collection::documents() const {
  std::vector<const Index*> shards;
  std::vector<std::span<const std::uint32_t>> deleted;
  for (std::size_t s = 0; s < segments_.size(); ++s) {
    shards.push_back(&segments_[s]);
    deleted.emplace_back(deleted_[s]);
  }
  return ShardSet(std::move(shards), std::move(deleted));
}

CollectionWriter::CollectionWriter(std::string dir, double wait_seconds, bool merge)
    : dir_(std::move(dir)), wait_(wait_seconds), merge_(merge) {
  if (!Collection::exists(dir_)) throw Error(dir_ + ": not a collection (no manifest)");
}

CollectionChange CollectionWriter::add(const std::vector<RawDocument>& docs,
                                       const std::string& embeddings) {
  const WriterLock lock(dir_, wait_);
  State st = read_state(dir_, false);
  CollectionChange out;
  const Index& first = st.segments.front();
  if (first.tokenizer_version() != kTokenizerVersion)
    throw Error(dir_ + ": its documents were read with tokenizer version " +
                std::to_string(first.tokenizer_version()) + ", this program reads text with " +
                std::to_string(kTokenizerVersion) + ": rebuild the collection");
  const std::string path = checked_embeddings(st.manifest, embeddings);
  const WordSet words = distinct_tokens(docs, kTokenizerVersion);
  const Embeddings emb = Embeddings::load(path, &words);
  BuildOptions bo;
  bo.stopwords = &first.stopwords();
  bo.keep_text = first.has_text();
  std::optional<IndexData> data;
  try {
    data = build_index_data(emb, docs, bo, &out.report);
  } catch (const Error&) {
    // No document kept a word: nothing to add, though the ids still replace.
    if (out.report.documents_read != docs.size() || out.report.documents_kept != 0) throw;
  }
  const StringMap<Place> ids = live_ids(st);
  std::vector<Place> replaced;
  for (const RawDocument& d : docs)
    if (const auto it = ids.find(d.id); it != ids.end()) replaced.push_back(it->second);
  if (!data && replaced.empty())
    throw Error("no document has a word with an embedding: nothing to add (" +
                std::to_string(docs.size()) + " documents read)");
  // The replaced documents are deleted before the new segment joins (their places count the
  // segments of the last commit).
  delete_places(dir_, st, replaced);
  out.replaced = replaced.size();
  drop_empty(st);
  if (data) {
    append_segment(dir_, st, *data);
    out.added = data->ids.size();
    if (merge_) {
      WordOrder order(path);
      merge_tiers(dir_, st, order);
      merge_overlapping(dir_, st, order);
    }
  }
  out.generation = commit(dir_, st.manifest);
  out.segments = st.manifest.segments.size();
  return out;
}

CollectionChange CollectionWriter::remove(const std::vector<std::string>& ids) {
  const WriterLock lock(dir_, wait_);
  State st = read_state(dir_, false);
  CollectionChange out;
  const StringMap<Place> live = live_ids(st);
  std::vector<Place> places;
  for (const std::string& id : ids) {
    const auto it = live.find(id);
    if (it == live.end()) {
      out.not_found.push_back(id);
      continue;
    }
    places.push_back(it->second);
  }
  std::sort(places.begin(), places.end(), [](const Place& a, const Place& b) {
    return std::pair(a.segment, a.doc) < std::pair(b.segment, b.doc);
  });
  places.erase(std::unique(places.begin(), places.end(),
                           [](const Place& a, const Place& b) {
                             return a.segment == b.segment && a.doc == b.doc;
                           }),
               places.end());
  out.deleted = places.size();
  if (places.empty()) {  // nothing changes: no commit
    out.generation = st.manifest.generation;
    out.segments = st.manifest.segments.size();
    return out;
  }
  if (places.size() == live.size())
    throw Error(dir_ + ": deleting every document would leave an empty collection");
  delete_places(dir_, st, places);
  drop_empty(st);
  out.generation = commit(dir_, st.manifest);
  out.segments = st.manifest.segments.size();
  return out;
}

CollectionChange CollectionWriter::compact(const std::string& embeddings) {
  const WriterLock lock(dir_, wait_);
  State st = read_state(dir_, true);
  CollectionChange out;
  const bool deletions =
      std::any_of(st.deleted.begin(), st.deleted.end(), [](const auto& d) { return !d.empty(); });
  if (st.segments.size() > 1 || deletions) {
    WordOrder order(checked_embeddings(st.manifest, embeddings));
    merge_segments(dir_, st, 0, st.segments.size(), order);
    out.generation = commit(dir_, st.manifest);
  } else {
    out.generation = st.manifest.generation;
  }
  out.segments = st.manifest.segments.size();
  return out;
}

}  // namespace lcrwmd
