#pragma once
// A served collection's changes, made on one thread: adds that arrive while another change is
// committing wait, then are committed together as one change (a group commit: one segment, one
// round of syncs, one new snapshot for all of them), each answered as if committed alone; when
// idle, the commits other processes made. The merges the adds call for are made on a thread of
// their own (Lucene's concurrent merge scheduler), so that no add waits behind one: a merge
// takes the collection's lock only for its commit. Every change is served (the snapshot
// swapped) before its callers are answered.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"

namespace lcrwmd::app {

class ServiceWriter {
 public:
  struct Options {
    std::string embeddings;               // the recorded file or a copy; empty: the recorded path
    const WordVectors* loaded = nullptr;  // that file in memory (CollectionWriter::use_embeddings)
    bool merge = true;                    // merge after adds (the merge policy)
    double wait_seconds = 30;             // for another process's change (then CollectionBusy)
  };
  // What one add did, as if committed alone.
  struct Added {
    std::size_t added = 0;                 // its documents indexed
    std::size_t replaced = 0;              // of its ids, those live before it
    std::vector<std::string> not_indexed;  // its documents left with no word
    std::uint64_t generation = 0;          // the commit that holds it
    std::size_t documents = 0;             // live documents after that commit
  };

  ServiceWriter(const std::string& path, CollectionReader& served, Options options);
  ~ServiceWriter();
  ServiceWriter(const ServiceWriter&) = delete;
  ServiceWriter& operator=(const ServiceWriter&) = delete;

  // Adds documents (ids given once), returning once committed and served. Two adds committed
  // together that give one id: the later one's document is kept, as one after the other would.
  // Throws NothingToAdd (none of its documents kept a word and none replaces one),
  // CollectionBusy, QueueFull once closed, or the Error that stopped the commit.
  Added add(std::vector<RawDocument> docs);
  // Deletes the live document `id` (deleted 0: none has it), committed and served.
  CollectionChange remove(const std::string& id);
  // Commits the adds waiting, then stops; later ones throw QueueFull.
  void close();

  std::size_t merges() const { return merges_; }    // merges committed
  std::size_t commits() const { return commits_; }  // commits of adds (each one or more adds)
  std::size_t adds() const { return adds_; }        // adds answered (a 422 included)

 private:
  // What the writer's thread hands back: a result, or what went wrong, which the caller's own
  // thread raises (an exception object is never shared between the two threads).
  struct Outcome {
    enum class Failure { none, nothing_to_add, busy, error } failure = Failure::none;
    std::string message;
    Added added;
  };
  struct Pending {
    std::vector<RawDocument> docs;
    std::promise<Outcome> done;
  };
  void run();
  void commit(std::vector<Pending*>& group);
  void run_merges();

  CollectionReader& served_;
  const Options options_;
  CollectionWriter writer_;
  CollectionWriter merger_;  // the merge thread's own
  std::mutex write_mutex_;   // writer_, between the thread's commits and remove()
  std::mutex mutex_;         // pending_, stopping_, merge_due_
  std::condition_variable wake_, wake_merges_;
  std::vector<Pending*> pending_;
  bool stopping_ = false;
  bool merge_due_ = false;  // an add committed since the merge thread last looked
  std::atomic<std::size_t> merges_{0}, commits_{0}, adds_{0};
  std::thread thread_, merge_thread_;
};

}  // namespace lcrwmd::app
