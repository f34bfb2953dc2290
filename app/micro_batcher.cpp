#include "app/micro_batcher.h"

#include <algorithm>
#include <exception>
#include <iterator>

namespace lcrwmd::app {

MicroBatcher::MicroBatcher(Options options) : options_(options) {
  options_.max_batch = std::max<std::size_t>(options_.max_batch, 1);
  stats_.batch_sizes.assign(std::size(kBatchBuckets) + 1, 0);
  worker_ = std::thread([this] { run(); });
}

MicroBatcher::~MicroBatcher() {
  close();
  worker_.join();
}

void MicroBatcher::close() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

std::future<SearchResults> MicroBatcher::submit(std::shared_ptr<const Searcher> searcher,
                                                QuerySet queries, std::size_t k,
                                                const SearchOptions& options) {
  std::future<SearchResults> result;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw QueueFull("the service is shutting down");
    if (stats_.queued + queries.size() > options_.max_queued)
      throw QueueFull("too many queries waiting (" + std::to_string(stats_.queued) + ")");
    stats_.queued += queries.size();
    Job job{
        std::move(searcher), std::move(queries), k, options, std::chrono::steady_clock::now(), {}};
    result = job.done.get_future();
    queue_.push_back(std::move(job));
  }
  wake_.notify_all();
  return result;
}

MicroBatcher::Stats MicroBatcher::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

// One batch runs one method on one searcher: the options that change what is computed must
// agree (k does not: the batch runs at the largest).
bool MicroBatcher::same_batch(const Job& x, const Job& y) {
  const SearchOptions &a = x.options, &b = y.options;
  return x.searcher == y.searcher && a.method == b.method && a.direction == b.direction &&
         a.prune == b.prune && a.parameters == b.parameters;
}

std::size_t MicroBatcher::queued_like_front() const {
  std::size_t n = 0;
  for (const Job& j : queue_)
    if (same_batch(j, queue_.front())) n += j.queries.size();
  return n;
}

void MicroBatcher::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every search answered
    // Company is waited for where the last batch had some.
    const auto wait = company_ ? options_.max_wait : std::chrono::microseconds{0};
    const auto deadline = queue_.front().arrived + wait;
    wake_.wait_until(lock, deadline,
                     [&] { return stopping_ || queued_like_front() >= options_.max_batch; });
    // The front search and those like it behind, in arrival order, up to max_batch queries
    // (the front one whatever its size).
    std::vector<Job> batch;
    std::size_t queries = 0;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (batch.empty() ||
          (same_batch(*it, batch.front()) && queries + it->queries.size() <= options_.max_batch)) {
        queries += it->queries.size();
        batch.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    company_ = batch.size() > 1;
    // Counted as the batch starts: a caller holding its answer sees its batch counted.
    stats_.queued -= queries;
    ++stats_.batches;
    stats_.searches += batch.size();
    stats_.queries += queries;
    const auto bucket =
        std::lower_bound(std::begin(kBatchBuckets), std::end(kBatchBuckets), queries);
    ++stats_.batch_sizes[static_cast<std::size_t>(bucket - std::begin(kBatchBuckets))];
    lock.unlock();
    answer(batch);
    lock.lock();
  }
}

void MicroBatcher::answer(std::vector<Job>& jobs) {
  try {
    std::vector<const QuerySet*> parts;
    std::size_t k = 0;
    for (const Job& j : jobs) {
      parts.push_back(&j.queries);
      k = std::max(k, j.k);
    }
    SearchOptions options = jobs.front().options;
    options.progress = nullptr;
    SearchStats st;
    const Searcher& searcher = *jobs.front().searcher;
    const SearchResults all = searcher.search(concat(searcher.index(), parts), k, options, &st);
    {
      std::lock_guard lock(mutex_);
      stats_.word_pairs += st.word_pairs;
      stats_.recomputed += st.recomputed;
    }
    std::size_t row = 0;
    for (Job& j : jobs) {
      SearchResults mine;
      mine.n_queries = j.queries.size();
      mine.k = std::min(j.k, all.k);
      for (std::size_t q = 0; q < mine.n_queries; ++q, ++row) {
        const auto first = static_cast<std::ptrdiff_t>(row * all.k);
        const auto last = first + static_cast<std::ptrdiff_t>(mine.k);
        mine.distances.insert(mine.distances.end(), all.distances.begin() + first,
                              all.distances.begin() + last);
        mine.indices.insert(mine.indices.end(), all.indices.begin() + first,
                            all.indices.begin() + last);
      }
      j.done.set_value(std::move(mine));
    }
  } catch (...) {
    for (Job& j : jobs) {
      try {
        j.done.set_exception(std::current_exception());
      } catch (const std::future_error&) {  // already answered before the failure
      }
    }
  }
}

}  // namespace lcrwmd::app
