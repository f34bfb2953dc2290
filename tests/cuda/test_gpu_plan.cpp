// The CUDA backend's planning, result order and backend choice: plain C++, tested everywhere
// (with or without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "cuda/limits.h"
#include "cuda/plan.h"
#include "cuda/sort_key.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/topk.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

// ---- result order ----------------------------------------------------------------------

TEST(GpuSortKey, OrdersLikeNeighbors) {
  std::vector<float> values = {0.0f,   -0.0f,   1e-40f,
                               1e-30f, 0.5f,    0.5f,
                               1.0f,   3.0e38f, std::numeric_limits<float>::infinity(),
                               -1.0f,  -2.5f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 4.0f);
  for (int i = 0; i < 40; ++i) values.push_back(u(rng));
  std::vector<Neighbor> ns;
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::int64_t doc :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{4000000000}})
      ns.push_back({values[i], doc});
  for (const Neighbor& a : ns) {
    const std::uint64_t ka = cuda::sort_key(a.distance, static_cast<std::uint32_t>(a.index));
    EXPECT_EQ(cuda::key_doc(ka), static_cast<std::uint32_t>(a.index));
    EXPECT_EQ(cuda::key_distance(ka), a.distance);  // -0 comes back as 0, which compares equal
    for (const Neighbor& b : ns) {
      const std::uint64_t kb = cuda::sort_key(b.distance, static_cast<std::uint32_t>(b.index));
      ASSERT_EQ(ka < kb, a < b) << a.distance << "/" << a.index << " vs " << b.distance << "/"
                                << b.index;
    }
  }
}

TEST(GpuSortKey, CandidateCapacity) {
  EXPECT_EQ(cuda::select_capacity(100, 10), 100u);  // small rows: all of it
  EXPECT_GE(cuda::select_capacity(1000000, 10), 16u * 10 * 1000000 / 2048);
  EXPECT_LE(cuda::select_capacity(1000000, 10), 1000000u);
}

// ---- planning --------------------------------------------------------------------------

std::vector<std::uint64_t> random_indptr(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint64_t> indptr{0};
  for (std::size_t i = 0; i < n; ++i) indptr.push_back(indptr.back() + 1 + rng() % 40);
  return indptr;
}

TEST(GpuPlan, DocChunksCoverTheSetWithinTheBudget) {
  const auto indptr = random_indptr(1021, 5);
  for (std::size_t budget : {std::size_t{800}, std::size_t{5000}, std::size_t{1} << 30})
    for (std::size_t max_docs : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      const auto chunks = cuda::plan_doc_chunks(indptr, budget, max_docs);
      ASSERT_FALSE(chunks.empty());
      std::size_t next = 0;
      for (const cuda::DocRange& c : chunks) {
        EXPECT_EQ(c.begin, next);
        EXPECT_GT(c.end, c.begin);
        EXPECT_LE(cuda::csr_bytes(indptr, c.begin, c.end), budget);
        if (max_docs) {
          EXPECT_LE(c.size(), max_docs);
        }
        // As large as allowed: one more document would break a cap.
        if (c.end < 1021 && (!max_docs || c.size() < max_docs)) {
          EXPECT_GT(cuda::csr_bytes(indptr, c.begin, c.end + 1), budget);
        }
        next = c.end;
      }
      EXPECT_EQ(next, 1021u);
      if (budget == (std::size_t{1} << 30) && max_docs == 0) {
        EXPECT_EQ(chunks.size(), 1u);
      }
    }
  try {
    cuda::plan_doc_chunks(indptr, 20, 0);
    FAIL() << "a document larger than the budget must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("document 0"), std::string::npos) << e.what();
  }
}

TEST(GpuPlan, BatchesFitTheBudget) {
  std::vector<std::uint64_t> qptr{0};
  std::mt19937 rng(9);
  for (int q = 0; q < 300; ++q) qptr.push_back(qptr.back() + 1 + rng() % 120);
  for (Method method :
       {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("act"), Method("ict")})
    for (bool symmetric : {false, true})
      for (bool full : {false, true}) {
        cuda::WorkShape s;
        s.pass = implementation(method).gpu;
        SearchOptions o;
        o.method = method;
        s.act_reach = cuda::act_reach(o);
        s.symmetric = symmetric;
        s.full_matrix = full;
        s.vocab = 452058;
        s.dim = 300;
        s.docs = 1000000;
        s.k = 10;
        const std::size_t budget = std::size_t{4} << 30;
        for (std::size_t max_tile : {std::size_t{0}, std::size_t{3}}) {
          const auto batches = cuda::plan_gpu_batches(s, qptr, budget, 64, max_tile);
          std::size_t next = 0;
          for (const cuda::GpuBatch& b : batches) {
            EXPECT_EQ(b.begin, next);
            EXPECT_GT(b.end, b.begin);
            EXPECT_LE(b.end - b.begin, method == Method("rwmd") ? 1u : 64u);
            EXPECT_GE(b.tile_words, 1u);
            if (max_tile) {
              EXPECT_LE(b.tile_words, max_tile);
            }
            const std::size_t words = qptr[b.end] - qptr[b.begin];
            const std::size_t fixed = cuda::batch_bytes(s, b.end - b.begin, words);
            if (b.end - b.begin > 1) {
              EXPECT_LE(fixed, budget / 2);
            }
            if (method != Method("wcd") && method != Method("rwmd")) {
              EXPECT_LE(fixed + s.vocab * sizeof(float) * b.tile_words, budget);
            }
            next = b.end;
          }
          EXPECT_EQ(next, 300u);
        }
      }
}

// ACT keeps per vocabulary word k + 1 (cost, weight) slots a query, ICT one per query word,
// beside the cache of distances it chooses them from (one-sided too).
TEST(GpuPlan, ActCountsItsSlots) {
  SearchOptions o;
  EXPECT_EQ(cuda::act_reach(o), 0u);
  o.method = Method("act");
  o.parameters.set("act_steps", 0);
  EXPECT_EQ(cuda::act_reach(o), 1u);
  o.parameters.set("act_steps", 5);
  EXPECT_EQ(cuda::act_reach(o), 6u);
  o.parameters.set("act_steps", static_cast<double>(kMaxActSteps));
  EXPECT_EQ(cuda::act_reach(o), kMaxActSteps + 1);
  o.method = Method("ict");
  EXPECT_EQ(cuda::act_reach(o), std::numeric_limits<std::uint32_t>::max());

  cuda::WorkShape s;
  s.symmetric = false;
  s.vocab = 1000;
  s.dim = 10;
  s.docs = 50;
  s.k = 5;
  const std::size_t queries = 4, words = 40, f = sizeof(float);
  const std::size_t lc = cuda::batch_bytes(s, queries, words);
  s.pass = GpuPass::capped;
  s.act_reach = 2;
  const std::size_t act1 = cuda::batch_bytes(s, queries, words);
  EXPECT_EQ(act1 - lc, s.vocab * words * f + s.vocab * (queries * 2 * 2 * f + f));
  s.act_reach = std::numeric_limits<std::uint32_t>::max();
  EXPECT_EQ(cuda::batch_bytes(s, queries, words) - lc,
            s.vocab * words * f + s.vocab * (words * 2 * f + f));
}

TEST(GpuPlan, TooSmallABudgetIsAClearError) {
  cuda::WorkShape s;
  s.vocab = 1000;
  s.dim = 300;
  s.docs = 1000000;
  const std::vector<std::uint64_t> qptr{0, 50};
  try {
    cuda::plan_gpu_batches(s, qptr, std::size_t{1} << 20, 64, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device memory budget"), std::string::npos) << e.what();
  }
}

TEST(GpuPlan, GatherChunksOfTheQuadraticRwmd) {
  const auto indptr = random_indptr(200, 11);
  const cuda::DocRange all{13, 200};
  for (std::size_t bytes : {std::size_t{20000}, std::size_t{200000}}) {
    const auto parts = cuda::plan_gather_chunks(indptr, all, 8, 5, bytes);
    std::size_t next = all.begin;
    for (const cuda::DocRange& p : parts) {
      EXPECT_EQ(p.begin, next);
      EXPECT_LE((indptr[p.end] - indptr[p.begin]) * (8 + 4 + 5) * sizeof(float), bytes);
      next = p.end;
    }
    EXPECT_EQ(next, all.end);
  }
  EXPECT_THROW(cuda::plan_gather_chunks(indptr, all, 8, 5, 100), Error);
}

// ---- choosing the backend --------------------------------------------------------------

SearchOptions of(Method m) {
  SearchOptions o;
  o.method = m;
  return o;
}

TEST(Backend, ParseAndResolve) {
  for (Backend b : {Backend::cpu, Backend::cuda, Backend::automatic})
    EXPECT_EQ(parse_backend(to_string(b)), b);
  EXPECT_THROW(parse_backend("gpu"), Error);
  EXPECT_THROW(resolve_backend(Backend::cuda, of(Method("wmd"))), Error);
  EXPECT_EQ(resolve_backend(Backend::automatic, of(Method("wmd"))), Backend::cpu);
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("act"), Method("ict")})
    EXPECT_EQ(resolve_backend(Backend::cuda, of(m)), Backend::cuda) << to_string(m);
  EXPECT_EQ(resolve_backend(Backend::cpu, of(Method("lc-rwmd"))), Backend::cpu);
  EXPECT_EQ(resolve_backend(Backend::automatic, of(Method("lc-rwmd"))),
            gpu_device_count() == 0 ? Backend::cpu : Backend::cuda);
}

TEST(Backend, CudaWithoutADeviceIsAClearError) {
  if (gpu_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  const Index ix = Index::from_data(test::random_index(10, 20, 4, 3, 1));
  const std::vector<std::size_t> docs{0};
  const QuerySet qs = query_set_from_index(ix, docs);
  SearcherOptions o;
  o.backend = Backend::cuda;
  try {
    make_searcher(ix, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("no CUDA device") != std::string::npos ||
                what.find("built without CUDA") != std::string::npos)
        << what;
  }
  o.backend = Backend::automatic;  // falls back to the CPU
  const auto searcher = make_searcher(ix, o);
  EXPECT_EQ(searcher->backend(), Backend::cpu);
  EXPECT_EQ(searcher->search(qs, 3, {}).indices.front(), 0);
}

TEST(Backend, SearchersAnswerAsTheFreeFunctions) {
  const Index ix = Index::from_data(test::random_index(50, 40, 6, 9, 2));
  const QuerySet qs = test::mixed_queries(ix, 4, 8);
  SearcherOptions o;
  o.cpu.tile_rows = 7;
  o.cpu.tile_words = 3;
  const auto searcher = make_searcher(ix, o);
  EXPECT_EQ(searcher->backend(), Backend::cpu);
  EXPECT_EQ(&searcher->index(), &ix);
  EXPECT_EQ(searcher->n_docs(), ix.n_docs());
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("wmd")}) {
    SearchOptions so;
    so.method = m;
    const SearchResults a = searcher->search(qs, 4, so), b = search(ix, qs, 4, so);
    EXPECT_EQ(a.indices, b.indices) << to_string(m);
    for (std::size_t i = 0; i < a.distances.size(); ++i)
      EXPECT_NEAR(a.distances[i], b.distances[i], 1e-5f * std::max(1.0f, b.distances[i]));
  }
}

}  // namespace
}  // namespace lcrwmd
