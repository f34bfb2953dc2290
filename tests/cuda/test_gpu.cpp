// The CUDA backend's results against the CPU backend's, wherever a GPU is present; where none
// is, these tests say "SKIPPED" (with the reason). Its planning: test_gpu_plan.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <set>

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

#define REQUIRE_GPU()                                                                     \
  if (gpu_device_count() == 0)                                                            \
  GTEST_SKIP() << "no CUDA device ("                                                      \
               << (built_with_cuda() ? "no GPU or no driver here" : "built without CUDA") \
               << "): GPU results not checked"

// ---- GPU results against the CPU backend ------------------------------------------------

struct GpuCase {
  Method method;
  bool symmetric;
  std::size_t n_docs, batch, tile_words, chunk_docs;
  bool prune;
  std::size_t budget_mib = 0;  // --device-memory; 0: the default
  std::size_t act_steps = 1;   // act only
};

std::string describe(const GpuCase& c) {
  std::string s = to_string(c.method);
  if (c.method == Method("act")) s += std::to_string(c.act_steps);
  std::replace(s.begin(), s.end(), '-', '_');
  s += c.symmetric ? "_sym" : "_one";
  s += "_n" + std::to_string(c.n_docs) + "_b" + std::to_string(c.batch) + "_t" +
       std::to_string(c.tile_words) + "_c" + std::to_string(c.chunk_docs);
  s += c.prune ? "_prune" : "_full";
  if (c.budget_mib) s += "_mem" + std::to_string(c.budget_mib);
  return s;
}
std::string case_name(const testing::TestParamInfo<GpuCase>& info) { return describe(info.param); }
void PrintTo(const GpuCase& c, std::ostream* os) { *os << describe(c); }

class GpuVsCpu : public testing::TestWithParam<GpuCase> {};

// Copies of resident documents (exactly 0 to themselves), fresh random queries, words the index
// lacks, a one-word query.
QuerySet queries_for(const Index& ix) {
  if (ix.n_docs() >= 4) return test::mixed_queries(ix, 9, 17);
  const std::vector<std::size_t> docs{0};
  return query_set_from_index(ix, docs);
}

bool close(float a, float b) { return std::fabs(a - b) <= 2e-4f * std::max(1.0f, std::fabs(a)); }

TEST_P(GpuVsCpu, SameDistancesAndTopK) {
  REQUIRE_GPU();
  const GpuCase& c = GetParam();
  const Index ix = Index::from_data(test::random_index(c.n_docs, 97, 13, 15, 7));
  const QuerySet qs = queries_for(ix);
  SearchOptions cpu;
  cpu.method = c.method;
  cpu.direction = c.symmetric ? Direction::symmetric : Direction::document_to_query;
  cpu.parameters.set("act_steps", static_cast<double>(c.act_steps));
  SearchOptions gpu = cpu;
  gpu.batch = c.batch;
  gpu.prune = c.prune;
  GpuOptions go;
  go.tile_words = c.tile_words;
  go.chunk_docs = c.chunk_docs;
  go.memory_budget = c.budget_mib << 20;
  const GpuIndex device(ix, go);
  const std::size_t n = ix.n_docs();

  const std::vector<float> want = test::matrix(ix, qs, cpu);
  const std::vector<float> got = test::matrix(device, qs, gpu);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(close(want[i], got[i]))
        << "query " << i / n << " doc " << i % n << ": cpu " << want[i] << " gpu " << got[i];
  // Resident documents as queries: exactly 0 to themselves.
  const std::size_t self[] = {0, 3, n - 1};
  for (std::size_t j = 0; j < (n >= 4 ? 3u : 1u); ++j)
    EXPECT_EQ(got[j * n + self[j]], 0.0f) << "query " << j;

  for (std::size_t k : {std::size_t{1}, std::size_t{5}, n + 3}) {
    SearchStats st;
    const SearchResults r = device.search(qs, k, gpu, &st);
    EXPECT_EQ(st.backend, Backend::cuda);
    const SearchResults ref = search(ix, qs, k, cpu);
    ASSERT_EQ(r.k, ref.k);
    for (std::size_t q = 0; q < qs.size(); ++q) {
      std::set<std::int64_t> seen;
      for (std::size_t t = 0; t < r.k; ++t) {
        const std::int64_t doc = r.indices[q * r.k + t];
        ASSERT_GE(doc, 0);
        ASSERT_LT(static_cast<std::size_t>(doc), n);
        EXPECT_TRUE(seen.insert(doc).second) << "document listed twice";
        const float d = r.distances[q * r.k + t];
        // Up to ties: the same distances rank by rank, each the document's own distance.
        EXPECT_TRUE(close(ref.distances[q * r.k + t], d))
            << "query " << q << " rank " << t << ": cpu " << ref.distances[q * r.k + t] << " gpu "
            << d;
        EXPECT_TRUE(close(want[q * n + static_cast<std::size_t>(doc)], d));
        if (t > 0) {
          EXPECT_LE(r.distances[q * r.k + t - 1], d);
        }
      }
    }
  }
}

std::vector<GpuCase> gpu_cases() {
  std::vector<GpuCase> cases;
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1021}}) {
    cases.push_back({Method("lc-rwmd"), false, n, 64, 0, 0, true});
    cases.push_back({Method("lc-rwmd"), true, n, 64, 0, 0, true});
    cases.push_back({Method("lc-rwmd"), true, n, 4, 0, 0, false});
    cases.push_back({Method("wcd"), true, n, 64, 0, 0, true});
    cases.push_back({Method("rwmd"), true, n, 1, 0, 0, true});
    cases.push_back({Method("rwmd"), false, n, 1, 0, 0, true});
  }
  // Forced tiny tiles (several GEMMs per batch) and chunks (several resident chunks).
  cases.push_back({Method("lc-rwmd"), true, 1021, 1, 3, 0, true});
  cases.push_back({Method("lc-rwmd"), true, 1021, 5, 1, 100, true});
  cases.push_back({Method("lc-rwmd"), false, 1021, 3, 2, 7, true});
  cases.push_back({Method("lc-rwmd"), true, 31, 64, 5, 7, false});
  cases.push_back({Method("rwmd"), true, 1021, 1, 2, 300, true});
  cases.push_back({Method("wcd"), true, 1021, 2, 0, 64, true});
  // Batches whose words span several tiles, symmetric (the cache D2 reads holds them all).
  cases.push_back({Method("lc-rwmd"), true, 1021, 9, 4, 0, true});
  cases.push_back({Method("lc-rwmd"), true, 1021, 9, 8, 0, false});
  cases.push_back({Method("lc-rwmd"), false, 1021, 9, 5, 0, true});
  // A budget so small that batches shrink to one query.
  cases.push_back({Method("lc-rwmd"), true, 1021, 64, 0, 0, true, 40});
  cases.push_back({Method("lc-rwmd"), false, 1021, 64, 0, 0, true, 40});
  // ACT-k (k = 0, 1, 2, 5) and ICT: one-sided, symmetric top-k refined by ACT's D2, and every
  // distance; single queries and batches, tiny tiles, several chunks, a tight budget.
  for (std::size_t steps : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{5}})
    for (std::size_t n : {std::size_t{1}, std::size_t{1021}}) {
      cases.push_back({Method("act"), false, n, 64, 0, 0, true, 0, steps});
      cases.push_back({Method("act"), true, n, 64, 0, 0, true, 0, steps});
      cases.push_back({Method("act"), true, n, 1, 0, 0, false, 0, steps});
    }
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1021}}) {
    cases.push_back({Method("ict"), false, n, 64, 0, 0, true});
    cases.push_back({Method("ict"), true, n, 64, 0, 0, true});
    cases.push_back({Method("ict"), true, n, 4, 0, 0, false});
  }
  cases.push_back({Method("act"), true, 1021, 9, 4, 100, true, 0, 1});
  cases.push_back({Method("act"), false, 1021, 1, 3, 7, true, 0, 2});
  cases.push_back({Method("ict"), true, 1021, 9, 5, 0, true});
  cases.push_back({Method("ict"), false, 31, 5, 1, 7, false});
  cases.push_back({Method("act"), true, 1021, 64, 0, 0, true, 40, 1});
  cases.push_back({Method("ict"), true, 1021, 64, 0, 0, true, 40});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuVsCpu, testing::ValuesIn(gpu_cases()), case_name);

TEST(Gpu, ResidentIndexAcrossSearchesAndEmptyQueries) {
  REQUIRE_GPU();
  const Index ix = Index::from_data(test::random_index(257, 80, 10, 12, 9));
  const GpuIndex gpu(ix);
  EXPECT_EQ(gpu.chunks(), 1u);
  EXPECT_GT(gpu.resident_bytes(), 0u);
  EXPECT_EQ(gpu.uploads(), 1u);
  SearchOptions o;
  const QuerySet none;
  EXPECT_EQ(gpu.search(none, 5, o).n_queries, 0u);
  const QuerySet qs = test::mixed_queries(ix, 6, 2);
  const SearchResults a = gpu.search(qs, 7, o), b = gpu.search(qs, 7, o);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.distances, b.distances);
  o.direction = Direction::document_to_query;
  const SearchResults one = gpu.search(qs, 7, o);
  gpu.pairwise(qs, o, [](std::size_t, std::size_t, const float*) {});
  EXPECT_EQ(gpu.uploads(), 1u) << "searches must not upload the resident set again";
  const SearchResults ref = search(ix, qs, 7, o);
  for (std::size_t i = 0; i < ref.distances.size(); ++i)
    EXPECT_TRUE(close(ref.distances[i], one.distances[i]));
  // Chunks that all fit stay resident too: one upload each, none per search.
  GpuOptions chunked;
  chunked.chunk_docs = 50;
  const GpuIndex parts(ix, chunked);
  EXPECT_EQ(parts.chunks(), 6u);
  parts.search(qs, 7, o);
  EXPECT_EQ(parts.uploads(), parts.chunks());
}

TEST(Gpu, AutomaticSearcherSendsWmdToTheCpu) {
  REQUIRE_GPU();
  const Index ix = Index::from_data(test::random_index(40, 30, 6, 8, 4));
  const QuerySet qs = test::mixed_queries(ix, 3, 5);
  SearcherOptions so;
  so.backend = Backend::automatic;
  const auto searcher = make_searcher(ix, so);
  EXPECT_EQ(searcher->backend(), Backend::cuda);
  SearchOptions o;
  SearchStats st;
  searcher->search(qs, 3, o, &st);
  EXPECT_EQ(st.backend, Backend::cuda);
  o.method = Method("wmd");
  const SearchResults r = searcher->search(qs, 3, o, &st);
  EXPECT_EQ(st.backend, Backend::cpu);
  EXPECT_EQ(r.indices, search(ix, qs, 3, o).indices);
}

// A vocabulary of 2.2M words against a batch of 2,560 query words: phase-1 tiles (up to 1,024
// columns) and the symmetric cache of more than 2^31 elements, as a GoogleNews-sized vocabulary
// makes them; small vectors keep the CPU reference fast.
TEST(Gpu, TilesPastTwoToTheThirtyOneElements) {
  REQUIRE_GPU();
  constexpr std::size_t kVocab = 2200000, kDim = 4, kWords = 10;
  static_assert(kVocab * cuda::kMaxTileColumns > (std::size_t{1} << 31));
  IndexData d;
  d.dim = kDim;
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  d.vectors.resize(kVocab * kDim);
  for (float& x : d.vectors) x = normal(rng);
  for (std::size_t u = 0; u < kVocab; ++u) d.vocab.push_back(test::numbered('w', u));
  d.doc_freq.assign(kVocab, 1);
  for (std::size_t i = 0; i < kVocab / kWords; ++i) {
    for (std::size_t t = 0; t < kWords; ++t) {
      d.indices.push_back(static_cast<std::uint32_t>(i * kWords + t));
      d.values.push_back(static_cast<float>(t + 1) / 55.0f);
    }
    d.indptr.push_back(d.indices.size());
    d.ids.push_back(test::numbered('d', i));
    d.labels.emplace_back();
  }
  const Index ix = Index::from_data(std::move(d));
  std::vector<std::size_t> docs;
  for (std::size_t i = 0; i < 256; ++i) docs.push_back(i * 397 % ix.n_docs());
  const QuerySet qs = query_set_from_index(ix, docs);
  for (bool symmetric : {false, true}) {
    SearchOptions cpu;
    cpu.direction = symmetric ? Direction::symmetric : Direction::document_to_query;
    SearchOptions gpu = cpu;
    gpu.batch = 256;
    const SearchResults want = search(ix, qs, 5, cpu), got = GpuIndex(ix).search(qs, 5, gpu);
    ASSERT_EQ(got.k, want.k);
    for (std::size_t i = 0; i < want.distances.size(); ++i)
      ASSERT_TRUE(close(want.distances[i], got.distances[i]))
          << (symmetric ? "symmetric" : "one-sided") << " query " << i / want.k << " rank "
          << i % want.k << ": cpu " << want.distances[i] << " gpu " << got.distances[i];
    for (std::size_t j = 0; j < docs.size(); ++j) EXPECT_EQ(got.distances[j * got.k], 0.0f);
  }
}

TEST(Gpu, Tf32StaysClose) {
  REQUIRE_GPU();
  const Index ix = Index::from_data(test::random_index(300, 80, 64, 12, 4));
  const QuerySet qs = test::mixed_queries(ix, 6, 3);
  GpuOptions go;
  go.allow_tf32 = true;
  const SearchOptions o;
  const std::vector<float> got = test::matrix(GpuIndex(ix, go), qs, o),
                           want = test::matrix(ix, qs, o);
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-2f * std::max(1.0f, want[i]));
}

// Certified phase 1 (cuda/word_terms.h): bf16 on tensor cores gives f32's bits, distances and
// neighbours in order, one-sided and symmetric, every distance and the pruned top-k, single
// queries and batches, tiny tiles and several chunks; the symmetric top-k computes D2 only
// where D2's lower bound leaves a document a chance.
TEST(Gpu, Bf16GivesF32sBits) {
  REQUIRE_GPU();
  if (gpu_device(0).compute_major < 8) GTEST_SKIP() << "no BF16 tensor cores on this device";
  const Index ix = Index::from_data(test::random_index(1021, 300, 24, 40, 9));
  const QuerySet qs = test::mixed_queries(ix, 9, 17);
  const std::size_t n = ix.n_docs();
  for (const std::size_t tile_words : {std::size_t{0}, std::size_t{5}})
    for (const std::size_t chunk_docs : {std::size_t{0}, std::size_t{300}}) {
      GpuOptions f32;
      f32.precision = Precision::f32;
      f32.tile_words = tile_words;
      f32.chunk_docs = chunk_docs;
      GpuOptions bf16 = f32;
      bf16.precision = Precision::bf16;
      const GpuIndex a(ix, f32), b(ix, bf16);
      ASSERT_EQ(a.precision(), Precision::f32);
      ASSERT_EQ(b.precision(), Precision::bf16);
      for (const bool symmetric : {false, true})
        for (const std::size_t batch : {std::size_t{1}, std::size_t{64}}) {
          SCOPED_TRACE(testing::Message()
                       << "tiles " << tile_words << " chunks " << chunk_docs
                       << (symmetric ? " symmetric" : " one-sided") << " batch " << batch);
          SearchOptions o;
          o.direction = symmetric ? Direction::symmetric : Direction::document_to_query;
          o.batch = batch;
          const std::vector<float> ma = test::matrix(a, qs, o), mb = test::matrix(b, qs, o);
          for (std::size_t i = 0; i < ma.size(); ++i)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(ma[i]), std::bit_cast<std::uint32_t>(mb[i]))
                << "query " << i / n << " doc " << i % n << ": f32 " << ma[i] << " bf16 " << mb[i];
          for (const std::size_t k : {std::size_t{1}, std::size_t{10}, n + 3}) {
            SearchStats sa, sb;
            const SearchResults ra = a.search(qs, k, o, &sa), rb = b.search(qs, k, o, &sb);
            EXPECT_EQ(ra.indices, rb.indices) << "k " << k;
            ASSERT_EQ(ra.distances.size(), rb.distances.size());
            for (std::size_t i = 0; i < ra.distances.size(); ++i)
              EXPECT_EQ(std::bit_cast<std::uint32_t>(ra.distances[i]),
                        std::bit_cast<std::uint32_t>(rb.distances[i]))
                  << "k " << k << " entry " << i;
            EXPECT_EQ(sa.precision, Precision::f32);
            EXPECT_EQ(sb.precision, Precision::bf16);
            if (symmetric && k == 10) {
              // Tightened bounds rule documents out before their D2 is computed.
              EXPECT_GT(sb.tightened, 0u);
              EXPECT_LT(sb.refined, sb.tightened);
              EXPECT_LT(sa.refined, sa.tightened);
            }
          }
        }
    }
}

TEST(Gpu, WmdIsCpuOnly) {
  const Index ix = Index::from_data(test::random_index(10, 20, 4, 3, 1));
  const std::vector<std::size_t> docs{0};
  const QuerySet qs = query_set_from_index(ix, docs);
  SearchOptions o;
  o.method = Method("wmd");
  SearcherOptions so;
  so.backend = Backend::cuda;
  // Without a GPU the searcher cannot be made; with one, it refuses wmd.
  EXPECT_THROW(make_searcher(ix, so)->search(qs, 3, o), Error);
  SearchOptions wmd;
  wmd.method = Method("wmd");
  EXPECT_THROW(resolve_backend(Backend::cuda, wmd), OptionError);
}

}  // namespace
}  // namespace lcrwmd
