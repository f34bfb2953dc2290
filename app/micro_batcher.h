#pragma once
// Searches that arrive close together run as one batch (one phase 1 for all their queries):
// the first waiting search opens a batch, and every search with the same options that arrives
// within max_wait joins it, up to max_batch queries. A batch waits for company only where the
// last one had some: a lone client's searches run at once (each waited max_wait for company
// that never came: 2 ms on a 1 ms bm25 search), while concurrent clients' keep sharing
// batches; the searches that queue while a batch runs join the next whatever the wait. Each search
// gets exactly the rows of its own queries, cut to its own k (the batch runs at the largest): a
// top-k is a prefix of a larger top-k, so the answers are those of the searches run one at a time.
// Each search names the searcher it runs on (the service's snapshot of its collection when it
// arrived), and only searches of one searcher share a batch: a search never sees another snapshot
// than its own.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"

namespace lcrwmd::app {

// More queries waiting than the batcher admits: the caller answers 503.
struct QueueFull : Error {
  using Error::Error;
};

class MicroBatcher {
 public:
  struct Options {
    std::size_t max_batch = 256;               // queries per batch
    std::chrono::microseconds max_wait{2000};  // how long a batch waits for company
    std::size_t max_queued = 4096;             // queries waiting, at most
  };
  struct Stats {
    std::size_t batches = 0, searches = 0, queries = 0, queued = 0;
    std::size_t word_pairs = 0, recomputed = 0;  // the searches' phase 1 (SearchStats)
    std::vector<std::size_t> batch_sizes;        // queries per batch, histogram over kBatchBuckets
  };
  static constexpr std::size_t kBatchBuckets[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

  explicit MicroBatcher(Options options);
  // Answers every accepted search, then stops.
  ~MicroBatcher();
  // Takes no more searches (submit throws QueueFull) and runs those waiting without waiting
  // for company: for a drain.
  void close();
  MicroBatcher(const MicroBatcher&) = delete;
  MicroBatcher& operator=(const MicroBatcher&) = delete;

  // Queries written for `searcher` (kept alive until they are answered). Throws QueueFull where
  // accepting them would exceed max_queued.
  std::future<SearchResults> submit(std::shared_ptr<const Searcher> searcher, QuerySet queries,
                                    std::size_t k, const SearchOptions& options);
  Stats stats() const;

 private:
  struct Job {
    std::shared_ptr<const Searcher> searcher;
    QuerySet queries;
    std::size_t k;
    SearchOptions options;
    std::chrono::steady_clock::time_point arrived;
    std::promise<SearchResults> done;
  };
  static bool same_batch(const Job& a, const Job& b);
  std::size_t queued_like_front() const;
  void run();
  void answer(std::vector<Job>& jobs);

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool company_ = true;  // the last batch held more than one search (a new batcher expects some)
  Stats stats_;
  std::thread worker_;
};

}  // namespace lcrwmd::app
