// DocumentSnapshot and CollectionReader (lcrwmd/collection_reader.h).
#include "lcrwmd/collection_reader.h"

#include <utility>

#include "lcrwmd/error.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

std::shared_ptr<const DocumentSnapshot> DocumentSnapshot::open(
    const std::vector<std::string>& paths, bool verify, const SearcherOptions& searcher) {
  if (paths.empty()) throw Error("no index to open");
  if (paths.size() > 1)
    for (const std::string& path : paths)
      if (Collection::exists(path))
        throw Error(path + ": a collection directory is searched alone, not with other indexes");
  std::shared_ptr<DocumentSnapshot> s(new DocumentSnapshot);
  s->options_ = searcher;
  if (Collection::exists(paths.front())) {
    s->collection_ = Collection::open(paths.front(), verify);
    s->documents_ = std::make_unique<SegmentSet>(s->collection_->documents());
    return s;
  }
  s->files_.reserve(paths.size());  // the SegmentSet points into it
  for (const std::string& path : paths) s->files_.push_back(Index::load(path, verify));
  std::vector<const Index*> files;
  for (const Index& ix : s->files_) files.push_back(&ix);
  s->documents_ = std::make_unique<SegmentSet>(std::move(files));
  return s;
}

std::shared_ptr<const DocumentSnapshot> DocumentSnapshot::reopen(const DocumentSnapshot& earlier,
                                                                 bool verify) {
  if (!earlier.collection_) throw Error("index files do not change: nothing to reopen");
  std::shared_ptr<DocumentSnapshot> s(new DocumentSnapshot);
  s->options_ = earlier.options_;
  s->collection_ = earlier.collection_->reopen(verify);
  s->documents_ = std::make_unique<SegmentSet>(s->collection_->documents(earlier.documents_.get()));
  std::call_once(s->made_, [&] {
    s->searcher_ = std::make_unique<CollectionSearcher>(*s->documents_, s->options_,
                                                        &earlier.collection_searcher());
  });
  return s;
}

const Index* DocumentSnapshot::one_index() const {
  if (collection_) return collection_->is_one_index() ? &collection_->segment(0) : nullptr;
  return files_.size() == 1 ? &files_.front() : nullptr;
}

const Searcher& DocumentSnapshot::searcher() const { return collection_searcher(); }

const CollectionSearcher& DocumentSnapshot::collection_searcher() const {
  std::call_once(
      made_, [this] { searcher_ = std::make_unique<CollectionSearcher>(*documents_, options_); });
  return *searcher_;
}

CollectionReader::CollectionReader(std::string path, CollectionReaderOptions options)
    : path_(std::move(path)), options_(options), current_(open(options_.verify)) {}

std::shared_ptr<const DocumentSnapshot> CollectionReader::open(
    bool verify, const DocumentSnapshot* earlier) const {
  std::shared_ptr<const DocumentSnapshot> s =
      earlier ? DocumentSnapshot::reopen(*earlier, verify)
              : DocumentSnapshot::open({path_}, verify, options_.searcher);
  if (options_.query_vectors != nullptr)
    for (std::size_t i = 0; i < s->documents().size(); ++i) {
      const Index& segment = s->documents().segment(i);
      bool seen = false;  // checked when the earlier snapshot was opened
      for (std::size_t j = 0; earlier && j < earlier->documents().size(); ++j)
        seen = seen || &earlier->documents().segment(j) == &segment;
      if (!seen) check_embeddings(segment, *options_.query_vectors);
    }
  (void)s->searcher();
  return s;
}

std::shared_ptr<const DocumentSnapshot> CollectionReader::acquire() const {
  const std::lock_guard lock(mutex_);
  return current_;
}

bool CollectionReader::refresh() {
  // An index file never changes; a collection only where its manifest names a newer commit.
  const std::shared_ptr<const DocumentSnapshot> now = acquire();
  if (now->collection() == nullptr || Collection::last_generation(path_) == now->generation())
    return false;
  std::shared_ptr<const DocumentSnapshot> next = open(options_.verify_refreshes, now.get());
  const std::lock_guard lock(mutex_);
  if (next->generation() <= current_->generation()) return false;
  current_ = std::move(next);
  return true;
}

}  // namespace lcrwmd
