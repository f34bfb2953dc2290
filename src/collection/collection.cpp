// Collection and CollectionWriter (lcrwmd/collection.h): what a commit holds, and each change
// as one commit (collection/commit.h) with the merges it calls for (collection/merge_policy.h).
#include "lcrwmd/collection.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "collection/collection_files.h"
#include "collection/commit.h"
#include "collection/merge_policy.h"
#include "collection/prepared_merge.h"
#include "lcrwmd/error.h"
#include "lcrwmd/plural.h"
#include "lcrwmd/string_map.h"
#include "lcrwmd/text.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

using namespace collection;

namespace {

// Segments [b, e) replaced by one segment of their live documents, in order (merge_documents),
// under the writer's lock: written to its file as it is serialized (a compaction of a large
// collection holds no second copy of it in memory).
void merge_segments(const std::string& dir, State& st, std::size_t b, std::size_t e) {
  Segment merged = write_segment(dir, st.manifest, merged_documents(st, {b, e}));
  const auto at = [&](std::size_t i) {
    return st.segments.begin() + static_cast<std::ptrdiff_t>(i);
  };
  st.segments.erase(at(b), at(e));
  st.segments.insert(at(b), std::move(merged));
}

// The merge the policy asks for next in `st`, or none. distinct: the segments' distinct words,
// counted where the policy asks (merges leave them as they are).
std::optional<MergeCandidate> due_merge(const State& st, std::optional<std::size_t>& distinct) {
  const auto distinct_words = [&] {
    if (!distinct) {
      WordSet words;
      for (const Segment& seg : st.segments)
        for (std::size_t u = 0; u < seg.index->vocab_size(); ++u) words.emplace(seg.index->word(u));
      distinct = words.size();
    }
    return *distinct;
  };
  std::vector<SegmentSummary> seen;
  for (const Segment& seg : st.segments) seen.push_back({seg.live(), seg.index->vocab_size()});
  return next_merge(seen, distinct_words);
}

// The merges the policy asks for, one after another, each on the segments the last one left.
void merge_due(const std::string& dir, State& st) {
  std::optional<std::size_t> distinct;
  while (const std::optional<MergeCandidate> due = due_merge(st, distinct))
    merge_segments(dir, st, due->begin, due->end);
}

}  // namespace

bool Collection::exists(const std::string& path) {
  struct stat st {};
  return ::stat(join(path, kManifest).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::uint64_t Collection::last_generation(const std::string& path) {
  return read_manifest(path).generation;
}

Collection Collection::open(const std::string& path, bool verify) {
  return open_share(path, 0, 1, verify);
}

Collection Collection::open_share(const std::string& path, std::size_t part, std::size_t parts,
                                  bool verify) {
  return Collection(path, read_state(path, verify, {.part = part, .parts = parts}));
}

Collection Collection::reopen(bool verify) const {
  return Collection(path_, read_state(path_, verify, {}, segments_));
}

Collection::Collection(std::string path, State st)
    : path_(std::move(path)),
      embeddings_(std::move(st.manifest.embeddings)),
      generation_(st.manifest.generation),
      fingerprint_(st.manifest.embeddings_fingerprint),
      segments_(std::move(st.segments)) {
  for (const Segment& seg : segments_) live_ += seg.live();
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
  State st;
  st.manifest.embeddings = absolute(embeddings);
  st.manifest.embeddings_fingerprint = file_fingerprint(st.manifest.embeddings);
  append_segment(dir, st, first);
  commit(dir, st);
}

Index load_index(const std::string& path, bool verify) {
  if (!Collection::exists(path)) return Index::load(path, verify);
  State st = read_state(path, verify);
  if (st.segments.size() != 1 || !st.segments[0].deleted.empty()) {
    std::size_t deleted = 0;
    for (const Segment& s : st.segments) deleted += s.deleted.size();
    throw Error(not_one_index(path, st.segments.size(), deleted));
  }
  return std::move(*st.segments[0].index);
}

std::string not_one_index(const std::string& path, std::size_t segments, std::size_t deleted) {
  return path + ": a collection of " + plural(segments, "segment") +
         (deleted > 0 ? " with " + plural(deleted, "deleted document") : std::string()) +
         "; this reads one index: `lcrwmd compact --index " + path + "` makes it one";
}

bool Collection::holds_one_index(const std::string& path) {
  const Manifest m = read_manifest(path);
  return m.segments.size() == 1 && m.segments[0].deletions.empty();
}

Collection::Collection(Collection&&) noexcept = default;
Collection& Collection::operator=(Collection&&) noexcept = default;
Collection::~Collection() = default;

std::size_t Collection::n_deleted() const {
  std::size_t n = 0;
  for (const Segment& seg : segments_) n += seg.deleted.size();
  return n;
}

std::optional<std::uint32_t> Segment::find_live(std::string_view id) const {
  const std::optional<std::size_t> doc = index->find_doc(id);
  if (!doc || std::binary_search(deleted.begin(), deleted.end(), static_cast<std::uint32_t>(*doc)))
    return std::nullopt;
  return static_cast<std::uint32_t>(*doc);
}

SegmentSet Collection::documents(const SegmentSet* earlier) const {
  std::vector<const Index*> shards;
  std::vector<std::span<const std::uint32_t>> deleted;
  for (const Segment& seg : segments_) {
    shards.push_back(seg.index.get());
    deleted.emplace_back(seg.deleted);
  }
  return SegmentSet(std::move(shards), std::move(deleted), earlier);
}

void Collection::check_embeddings(const std::string& path) const {
  Manifest m;
  m.embeddings = embeddings_;
  m.embeddings_fingerprint = fingerprint_;
  checked_embeddings(m, path);
}

CollectionWriter::CollectionWriter(std::string dir, double wait_seconds, bool merge)
    : dir_(std::move(dir)), wait_(wait_seconds), merge_(merge) {
  if (!Collection::exists(dir_)) {
    struct stat st {};
    const bool file = ::stat(dir_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    throw Error(dir_ + ": not a collection (no manifest)" +
                (file ? std::string(": an index file, which does not change; `lcrwmd build "
                                    "--collection --output DIR` builds a collection that takes "
                                    "adds, deletes and compactions")
                      : std::string()));
  }
}

CollectionChange CollectionWriter::add(const std::vector<RawDocument>& docs,
                                       const std::string& embeddings) {
  const WriterLock lock(dir_, wait_, on_wait_);
  State st = read_state(dir_, false, {}, known_);
  CollectionChange out;
  const Index& first = *st.segments.front().index;
  if (first.tokenizer_version() != kTokenizerVersion)
    throw Error(dir_ + ": its documents were read with tokenizer version " +
                std::to_string(first.tokenizer_version()) + ", this program reads text with " +
                std::to_string(kTokenizerVersion) + ": rebuild the collection");
  // The documents' words' vectors: a table in memory as it is (the documents are read once);
  // a model's for their words; else those words' read from the file.
  const std::string source =
      checked_embeddings(st.manifest, loaded_ ? loaded_->source() : embeddings);
  const auto* table = dynamic_cast<const Embeddings*>(loaded_);
  std::optional<Embeddings> selected;
  if (table == nullptr) {
    const WordSet words = distinct_tokens(docs, kTokenizerVersion);
    selected = loaded_ ? select_vectors(*loaded_, words) : Embeddings::load(source, &words);
  }
  const Embeddings& emb = table != nullptr ? *table : *selected;
  BuildOptions bo;
  bo.stopwords = &first.stopwords();
  bo.keep_text = first.has_text();
  bo.unit_vectors = first.unit_vectors();
  bo.metric = first.shared_metric();
  std::optional<IndexData> data;
  try {
    data = build_index_data(emb, docs, bo, &out.report);
  } catch (const Error&) {
    // No document kept a word: nothing to add, though the ids still replace.
    if (out.report.documents_read != docs.size() || out.report.documents_kept != 0) throw;
  }
  std::vector<Place> replaced;
  for (const RawDocument& d : docs)
    if (const std::optional<Place> at = find_live(st, d.id)) {
      replaced.push_back(*at);
      out.replaced_ids.push_back(d.id);
    }
  if (!data && replaced.empty())
    throw NothingToAdd("no document has a word with an embedding: nothing to add (" +
                       std::to_string(docs.size()) + " documents read)");
  // The replaced documents are deleted before the new segment joins (their places count the
  // segments of the last commit).
  delete_places(dir_, st, replaced);
  out.replaced = replaced.size();
  drop_empty(st);
  if (data) {
    append_segment(dir_, st, *data);
    out.added = data->ids.size();
    if (merge_) merge_due(dir_, st);
  }
  out.generation = committed(st);
  out.segments = st.segments.size();
  return out;
}

CollectionChange CollectionWriter::remove(const std::vector<std::string>& ids) {
  const WriterLock lock(dir_, wait_, on_wait_);
  State st = read_state(dir_, false, {}, known_);
  CollectionChange out;
  std::vector<Place> places;
  for (const std::string& id : ids) {
    if (const std::optional<Place> at = find_live(st, id))
      places.push_back(*at);
    else
      out.not_found.push_back(id);
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
    out.segments = st.segments.size();
    return out;
  }
  std::size_t live = 0;
  for (const Segment& seg : st.segments) live += seg.live();
  if (places.size() == live)
    throw Error(dir_ + ": deleting every document would leave an empty collection");
  delete_places(dir_, st, places);
  drop_empty(st);
  out.generation = committed(st);
  out.segments = st.segments.size();
  return out;
}

CollectionChange CollectionWriter::merge() {
  // Each merge is made from the last commit without the writer's lock, so that other changes
  // commit meanwhile (a service's adds do not wait behind its merges); only placing it and the
  // commit take the lock.
  CollectionChange out;
  for (;;) {
    State st = read_state(dir_, false, {}, known_);
    known_ = st.segments;  // a merge thread's next look opens only what was committed since
    out.generation = st.manifest.generation;
    out.segments = st.segments.size();
    std::optional<std::size_t> distinct;
    const std::optional<MergeCandidate> due = due_merge(st, distinct);
    if (!due) return out;
    const PreparedMerge p = prepare_merge(st, *due);
    st = {};
    const WriterLock lock(dir_, wait_, on_wait_);
    State now = read_state(dir_, false, {}, known_);
    if (!place_merge(dir_, now, p)) {  // the next call plans on what is there now
      out.generation = now.manifest.generation;
      out.segments = now.segments.size();
      return out;
    }
    out.generation = committed(now);
    out.segments = now.segments.size();
    ++out.merges;
  }
}

CollectionChange CollectionWriter::compact() {
  const WriterLock lock(dir_, wait_, on_wait_);
  State st = read_state(dir_, true);
  CollectionChange out;
  const bool deletions = std::any_of(st.segments.begin(), st.segments.end(),
                                     [](const Segment& seg) { return !seg.deleted.empty(); });
  if (st.segments.size() > 1 || deletions) {
    merge_segments(dir_, st, 0, st.segments.size());
    out.generation = committed(st);
  } else {
    out.generation = st.manifest.generation;
  }
  out.segments = st.segments.size();
  return out;
}

std::uint64_t CollectionWriter::committed(State& st) {
  const std::uint64_t generation = commit(dir_, st);
  known_ = st.segments;  // the next change reads only what another writer changed since
  return generation;
}

}  // namespace lcrwmd
