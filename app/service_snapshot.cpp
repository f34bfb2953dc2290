#include "app/service_snapshot.h"

namespace lcrwmd::app {

std::shared_ptr<const Snapshot> Snapshot::open(const std::string& path,
                                               const SearcherOptions& options, bool verify) {
  auto s = std::make_shared<Snapshot>();
  if (Collection::exists(path)) {
    s->collection = Collection::open(path, verify);
    s->documents = std::make_unique<ShardSet>(s->collection->documents());
  } else {
    s->file = Index::load(path, verify);
    s->documents = std::make_unique<ShardSet>(std::vector<const Index*>{&*s->file});
  }
  s->searcher = std::make_unique<ShardedSearcher>(*s->documents, options);
  return s;
}

const Index* Snapshot::one_index() const {
  if (file) return &*file;
  return collection->is_one_index() ? &collection->segment(0) : nullptr;
}

void ServedSnapshot::refresh() {
  if (Collection::last_generation(path_) == get()->generation()) return;
  std::shared_ptr<const Snapshot> next = Snapshot::open(path_, options_, false);
  const std::lock_guard lock(mutex_);
  if (next->generation() > current_->generation()) current_ = std::move(next);
}

}  // namespace lcrwmd::app
