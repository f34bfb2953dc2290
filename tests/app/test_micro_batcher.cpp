// The service's micro-batcher: searches submitted together share batches and still get exactly
// what each would get alone (their own rows, their own k); a lone client's searches wait for no
// company; a full queue and a closed batcher refuse clearly. And concat(), which builds the shared
// batch.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "app/micro_batcher.h"
#include "lcrwmd/query.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

TEST(Concat, KeepsEachSetsQueriesAndExtraWords) {
  const Index ix = Index::from_data(test::random_index(60, 50, 6, 9, 5));
  const QuerySet a = test::mixed_queries(ix, 3, 7), b = test::mixed_queries(ix, 4, 8);
  ASSERT_FALSE(a.extra_words.empty());  // the words the index lacks must be renumbered
  const QuerySet ab = concat(ix, {&a, &b});
  ASSERT_EQ(ab.size(), a.size() + b.size());
  SearchOptions o;
  o.method = Method("wmd");
  const SearchResults both = search(ix, ab, 5, o), ra = search(ix, a, 5, o),
                      rb = search(ix, b, 5, o);
  std::vector<std::int64_t> want = ra.indices;
  want.insert(want.end(), rb.indices.begin(), rb.indices.end());
  EXPECT_EQ(both.indices, want);
  std::vector<float> want_d = ra.distances;
  want_d.insert(want_d.end(), rb.distances.begin(), rb.distances.end());
  EXPECT_EQ(both.distances, want_d);
}

TEST(MicroBatcher, SharedBatchesAnswerEachSearchAsAlone) {
  // Two searchers (a service's snapshots before and after a change): each search is answered
  // by its own, never batched with the other's.
  const Index ix = Index::from_data(test::random_index(200, 60, 8, 11, 3)),
              other = Index::from_data(test::random_index(150, 60, 8, 12, 3));
  const auto searcher = std::make_shared<const CpuSearcher>(ix),
             later = std::make_shared<const CpuSearcher>(other);
  app::MicroBatcher::Options opt;
  opt.max_batch = 40;
  opt.max_wait = std::chrono::milliseconds(50);
  app::MicroBatcher batcher(opt);
  struct Job {
    std::shared_ptr<const CpuSearcher> on;
    QuerySet q;
    std::size_t k;
    SearchOptions o;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < 15; ++i) {
    const auto& on = i % 3 == 2 ? later : searcher;
    Job j{on,
          test::mixed_queries(on->index(), 1 + i % 3, static_cast<unsigned>(100 + i)),
          1 + i % 5,
          {}};
    j.o.direction = i % 4 != 0 ? Direction::symmetric
                               : Direction::query_to_document;  // two kinds of batches, interleaved
    jobs.push_back(std::move(j));
  }
  std::vector<std::future<SearchResults>> answers(jobs.size());
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    clients.emplace_back(
        [&, i] { answers[i] = batcher.submit(jobs[i].on, jobs[i].q, jobs[i].k, jobs[i].o); });
  for (std::thread& t : clients) t.join();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const SearchResults got = answers[i].get(),
                        want = jobs[i].on->search(jobs[i].q, jobs[i].k, jobs[i].o);
    EXPECT_EQ(got.k, want.k) << i;
    EXPECT_EQ(got.indices, want.indices) << i;
    EXPECT_EQ(got.distances, want.distances) << i;
  }
  const app::MicroBatcher::Stats s = batcher.stats();
  EXPECT_EQ(s.searches, jobs.size());
  EXPECT_LT(s.batches, jobs.size());  // some searches shared a batch
  EXPECT_GE(s.batches, 4u);           // but never across searchers or directions
  EXPECT_EQ(s.queued, 0u);
}

// A search after a lone batch runs at once (a lone client's searches wait for no company); a new
// batcher's first search waits for company, as one after a shared batch does.
TEST(MicroBatcher, ALoneSearchAfterALoneBatchRunsAtOnce) {
  const Index ix = Index::from_data(test::random_index(30, 40, 5, 7, 2));
  const auto searcher = std::make_shared<const CpuSearcher>(ix);
  app::MicroBatcher::Options opt;
  opt.max_wait = std::chrono::seconds(1);
  app::MicroBatcher batcher(opt);
  const QuerySet q = query_set_from_index(ix, std::vector<std::size_t>{3});
  auto first = batcher.submit(searcher, q, 2, {});
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  EXPECT_EQ(first.get().indices, searcher->search(q, 2, {}).indices);
  auto second = batcher.submit(searcher, q, 2, {});
  ASSERT_EQ(second.wait_for(std::chrono::milliseconds(600)), std::future_status::ready);
  EXPECT_EQ(second.get().indices, searcher->search(q, 2, {}).indices);
  EXPECT_EQ(batcher.stats().batches, 2u);
}

TEST(MicroBatcher, RefusesBeyondItsQueueAndOnceClosed) {
  const Index ix = Index::from_data(test::random_index(30, 40, 5, 7, 2));
  const auto searcher = std::make_shared<const CpuSearcher>(ix);
  app::MicroBatcher::Options opt;
  opt.max_queued = 4;
  opt.max_wait = std::chrono::seconds(30);  // nothing runs until closed
  app::MicroBatcher batcher(opt);
  const std::vector<std::size_t> docs{0, 4, 9};
  const QuerySet three = query_set_from_index(ix, docs);
  auto first = batcher.submit(searcher, three, 2, {});
  EXPECT_THROW(batcher.submit(searcher, three, 2, {}), app::QueueFull);  // 6 > 4 waiting
  batcher.close();                                                       // runs the waiting one now
  EXPECT_EQ(first.get().indices, searcher->search(three, 2, {}).indices);
  EXPECT_THROW(batcher.submit(searcher, three, 2, {}), app::QueueFull);
}

}  // namespace
}  // namespace lcrwmd
