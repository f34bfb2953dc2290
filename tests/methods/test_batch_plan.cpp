// The CPU backend's batches: every query once, in order, within the memory budget.
#include <gtest/gtest.h>

#include "search/batch_plan.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

void expect_cover(const std::vector<BatchPlan>& plans, std::size_t n_queries,
                  std::size_t max_batch) {
  std::size_t next = 0;
  for (const BatchPlan& p : plans) {
    EXPECT_EQ(p.begin, next);
    EXPECT_GT(p.end, p.begin);
    EXPECT_LE(p.end - p.begin, max_batch);
    next = p.end;
  }
  EXPECT_EQ(next, n_queries);
}

TEST(BatchPlan, BatchZeroTakesAllTheBudgetHolds) {
  const Index ix = Index::from_data(test::random_index(200, 90, 6, 12, 4));
  const QuerySet qs = test::mixed_queries(ix, 300, 6);
  SearchOptions o;  // batch 0
  ASSERT_EQ(o.batch, 0u);
  for (const Direction direction : kDirections) {
    o.direction = direction;
    const auto plans = plan_batches(ix, qs, o, CpuOptions{});
    EXPECT_EQ(plans.size(), 1u) << "the default budget holds every query";
    CpuOptions small;
    // About 100 queries' rows and phase-1 arrays, and the first 100's share of the threads'
    // tiles, which grows with the core count.
    small.memory_budget =
        100 * 4 *
            (ix.n_docs() + ix.vocab_size() * (direction != Direction::document_to_query ? 30 : 1)) +
        phase1_scratch_per_word(ix, o, small) * qs.indptr[100];
    const auto split = plan_batches(ix, qs, o, small);
    expect_cover(split, qs.size(), qs.size());
    EXPECT_GT(split.size(), 1u);
    EXPECT_GT(split.front().end - split.front().begin, 16u) << "no cap but the budget";
  }
}

TEST(BatchPlan, CoversTheQueriesWithinTheBatchSize) {
  const Index ix = Index::from_data(test::random_index(200, 90, 6, 12, 4));
  const QuerySet qs = test::mixed_queries(ix, 40, 6);
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("wmd")})
    for (std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
      SearchOptions o;
      o.method = m;
      o.batch = batch;
      const auto plans = plan_batches(ix, qs, o, CpuOptions{});
      if (m == Method("wmd")) {  // WMD's batches hold at most 16 queries
        expect_cover(plans, qs.size(), std::min<std::size_t>(batch, 16));
        if (batch == 64) {
          EXPECT_EQ(plans.size(), (qs.size() + 15) / 16);
        }
        continue;
      }
      expect_cover(plans, qs.size(), batch);
      if (batch == 64) {
        EXPECT_EQ(plans.size(), 1u) << to_string(m) << ": the default budget holds them all";
      }
    }
}

TEST(BatchPlan, TheBudgetSplitsBatchesAndLeavesTheCacheWhatRemains) {
  const Index ix = Index::from_data(test::random_index(200, 90, 6, 12, 4));
  const QuerySet qs = test::mixed_queries(ix, 40, 6);
  SearchOptions o;
  o.direction =
      Direction::document_to_query;  // no word-distance cache: rows, minima and phase 1's tiles
  o.method = Method("wcd");          // no phase 1 either: rows and centroids alone
  CpuOptions cpu;
  const std::size_t per_query = 4 * ix.n_docs();
  cpu.memory_budget = 5 * per_query;
  const auto plans = plan_batches(ix, qs, o, cpu);
  expect_cover(plans, qs.size(), 5);
  for (const BatchPlan& p : plans) {
    EXPECT_EQ(p.end - p.begin, std::min<std::size_t>(5, qs.size() - p.begin));
    EXPECT_EQ(p.cache_budget, cpu.memory_budget - (p.end - p.begin) * per_query);
  }
  // LC-RWMD: each query's minima, and phase 1's tiles per batch word.
  o.method = Method("lc-rwmd");
  const std::size_t per_word = phase1_scratch_per_word(ix, o, cpu);
  EXPECT_GT(per_word, 0u);
  cpu.memory_budget = 4 * (ix.n_docs() + ix.vocab_size()) * 3 + per_word * qs.length(0) * 2;
  std::size_t words = 0;
  for (const BatchPlan& p : plan_batches(ix, qs, o, cpu)) {
    const std::size_t w = qs.indptr[p.end] - qs.indptr[p.begin];
    if (p.end - p.begin > 1) {
      EXPECT_LE(4 * (ix.n_docs() + ix.vocab_size()) * (p.end - p.begin) + per_word * w,
                cpu.memory_budget);
    }
    words += w;
  }
  EXPECT_EQ(words, qs.words.size());
  cpu.memory_budget = 1;  // smaller than one query: still one at a time, nothing refused
  expect_cover(plan_batches(ix, qs, o, cpu), qs.size(), 1);
}

TEST(BatchPlan, CrampedSymmetricBatchesBecomeSingleQueries) {
  const Index ix = Index::from_data(test::random_index(200, 90, 6, 12, 4));
  const QuerySet qs = test::mixed_queries(ix, 40, 6);
  SearchOptions o;  // symmetric LC-RWMD caches 4 v h bytes per query besides its rows
  CpuOptions cpu;
  cpu.memory_budget = 3 * 4 * (ix.n_docs() + ix.vocab_size());  // ~3 queries a batch: cramped
  const auto plans = plan_batches(ix, qs, o, cpu);
  expect_cover(plans, qs.size(), 1);
  EXPECT_EQ(plans.size(), qs.size());
}

}  // namespace
}  // namespace lcrwmd
