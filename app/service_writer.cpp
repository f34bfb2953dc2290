#include "app/service_writer.h"

#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "app/micro_batcher.h"
#include "lcrwmd/string_map.h"

namespace lcrwmd::app {

ServiceWriter::ServiceWriter(const std::string& path, CollectionReader& served, Options options)
    : served_(served),
      options_(std::move(options)),
      writer_(path, options_.wait_seconds, false),
      merger_(path, options_.wait_seconds, false) {
  if (options_.loaded) writer_.use_embeddings(*options_.loaded);
  for (CollectionWriter* w : {&writer_, &merger_})
    w->on_wait([](const std::string& message) {
      std::fprintf(stderr, "lcrwmd serve: %s\n", message.c_str());
    });
  thread_ = std::thread([this] { run(); });
  if (options_.merge) merge_thread_ = std::thread([this] { run_merges(); });
}

ServiceWriter::~ServiceWriter() { close(); }

void ServiceWriter::close() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  wake_merges_.notify_all();  // a merge under way is finished first (a kill loses only it)
  if (merge_thread_.joinable()) merge_thread_.join();
}

ServiceWriter::Added ServiceWriter::add(std::vector<RawDocument> docs) {
  Pending mine{std::move(docs), {}};
  std::future<Outcome> done = mine.done.get_future();
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) throw QueueFull("the service is shutting down");
    pending_.push_back(&mine);
  }
  wake_.notify_all();
  Outcome out = done.get();
  switch (out.failure) {
    case Outcome::Failure::none:
      return std::move(out.added);
    case Outcome::Failure::nothing_to_add:
      throw NothingToAdd(out.message);
    case Outcome::Failure::busy:
      throw CollectionBusy(out.message);
    case Outcome::Failure::error:
      break;
  }
  throw Error(out.message);
}

CollectionChange ServiceWriter::remove(const std::string& id) {
  CollectionChange c;
  {
    const std::lock_guard lock(write_mutex_);
    c = writer_.remove({id});
  }
  served_.refresh();
  return c;
}

void ServiceWriter::run() {
  constexpr auto kPoll = std::chrono::seconds(1);  // how soon another process's commit shows
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kPoll, [&] { return stopping_ || !pending_.empty(); });
    if (stopping_ && pending_.empty()) return;
    std::vector<Pending*> group;
    group.swap(pending_);
    lock.unlock();
    if (!group.empty()) {
      commit(group);
      {
        const std::lock_guard merge_lock(mutex_);
        merge_due_ = true;
      }
      wake_merges_.notify_all();
    } else {
      try {
        served_.refresh();
      } catch (const std::exception& e) {  // the next poll tries again
        std::fprintf(stderr, "lcrwmd serve: reading the collection: %s\n", e.what());
      }
    }
    lock.lock();
  }
}

void ServiceWriter::commit(std::vector<Pending*>& group) {
  // One version of each id is written: the last add's, as one add after the other leaves it.
  StringMap<std::size_t> last;
  for (std::size_t g = 0; g < group.size(); ++g)
    for (const RawDocument& d : group[g]->docs) last.insert_or_assign(d.id, g);
  std::vector<RawDocument> written;
  for (std::size_t g = 0; g < group.size(); ++g)
    for (const RawDocument& d : group[g]->docs)
      if (last.find(d.id)->second == g) written.push_back(d);
  CollectionChange c;
  bool nothing = false;
  try {
    {
      const std::lock_guard lock(write_mutex_);
      c = writer_.add(written, options_.embeddings);
    }
    served_.refresh();
  } catch (const NothingToAdd&) {
    nothing = true;  // every add's own answer says so below
  } catch (const std::exception& e) {
    const bool busy = dynamic_cast<const CollectionBusy*>(&e) != nullptr;
    for (Pending* p : group)
      p->done.set_value(
          {busy ? Outcome::Failure::busy : Outcome::Failure::error, e.what(), Added{}});
    return;
  }
  if (!nothing) ++commits_;
  const std::unordered_set<std::string> empty(c.report.empty_documents.begin(),
                                              c.report.empty_documents.end());
  const std::size_t live = served_.acquire()->documents().n_docs();
  // Ids live before the group, as the writer found them; and ids the group's earlier adds gave.
  const std::unordered_set<std::string> live_before(c.replaced_ids.begin(), c.replaced_ids.end());
  std::unordered_set<std::string> earlier;
  for (Pending* p : group) {
    Added a;
    for (const RawDocument& d : p->docs) {
      if (live_before.contains(d.id) || earlier.contains(d.id)) ++a.replaced;
      if (nothing || empty.contains(d.id))
        a.not_indexed.push_back(d.id);
      else
        ++a.added;
    }
    for (const RawDocument& d : p->docs) earlier.insert(d.id);
    ++adds_;
    if (a.added == 0 && a.replaced == 0) {
      p->done.set_value({Outcome::Failure::nothing_to_add,
                         "no document has a word with an embedding: nothing to add (" +
                             std::to_string(p->docs.size()) + " documents read)",
                         Added{}});
      continue;
    }
    a.generation = c.generation;
    a.documents = live;
    p->done.set_value({Outcome::Failure::none, {}, std::move(a)});
  }
}

void ServiceWriter::run_merges() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_merges_.wait(lock, [&] { return stopping_ || merge_due_; });
    if (stopping_) return;
    merge_due_ = false;
    lock.unlock();
    try {
      if (const std::size_t n = merger_.merge().merges; n > 0) {
        merges_ += n;
        served_.refresh();
      }
    } catch (const std::exception& e) {  // the next add's merge tries again
      std::fprintf(stderr, "lcrwmd serve: merging: %s\n", e.what());
    }
    lock.lock();
  }
}

}  // namespace lcrwmd::app
