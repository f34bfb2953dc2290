// Phase 1 in every precision gives the same bits (search.h's Precision): on data made to
// trouble the certificate (exact ties between different words, near-ties inside the
// low-precision error band, duplicated and zero vectors, norms from 1e-3 to 1e3, one-word
// queries), for every method, with default and tiny tiles, in batches of any size (a batch
// changes no sum either); and the distances themselves are the exact ones, recomputed from the
// vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cpu/simd.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/error.h"
#include "lcrwmd/search.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/phase1_timing.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

std::vector<Precision> available_precisions() {
  std::vector<Precision> out = {Precision::f32};
  for (Precision p : {Precision::bf16, Precision::int8})
    if (cpu::missing_instructions(p).empty()) out.push_back(p);
  return out;
}

// Words whose distances tie or nearly tie: lattice vectors (entries -1, 0, 1: many distances
// equal exactly), exact duplicates, zero vectors, copies nudged by 1e-7 .. 1e-3 of their norm
// (distances inside bf16's and int8's error bands), and norms spread from 1e-3 to 1e3.
IndexData troublesome_index(std::size_t n_docs, std::size_t vocab, std::size_t dim, unsigned seed) {
  IndexData d = test::random_index(n_docs, vocab, dim, 12, seed);
  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> trit(-1, 1);
  std::uniform_real_distribution<double> decades(-3, 3);
  auto vec = [&](std::size_t u) { return d.vectors.data() + u * dim; };
  for (std::size_t u = 0; u < vocab; ++u) {
    float* x = vec(u);
    switch (u % 8) {
      case 0:  // lattice
        for (std::size_t k = 0; k < dim; ++k) x[k] = static_cast<float>(trit(rng));
        break;
      case 1:  // the word before, exactly
        std::copy(vec(u - 1), vec(u - 1) + dim, x);
        break;
      case 2:  // the word before, nudged
      {
        const double nudge = std::pow(10.0, -7 + 4 * static_cast<double>(u % 5) / 4);
        for (std::size_t k = 0; k < dim; ++k)
          x[k] = vec(u - 1)[k] + static_cast<float>(nudge) * normal(rng);
        break;
      }
      case 3:  // a scale from 1e-3 to 1e3
      {
        const auto scale = static_cast<float>(std::pow(10.0, decades(rng)));
        for (std::size_t k = 0; k < dim; ++k) x[k] *= scale;
        break;
      }
      default:
        break;
    }
  }
  std::fill(vec(13), vec(13) + dim, 0.0f);  // a zero vector
  std::fill(vec(14), vec(14) + dim, 0.0f);  // and another: distance 0 between different words
  return d;
}

// Queries: copies of documents, fresh ones (words the index lacks among them), one-word ones.
QuerySet troublesome_queries(const Index& ix) {
  QuerySet qs = test::mixed_queries(ix, 6, 5);
  for (std::uint32_t u : {0u, 1u, 13u, 2u})  // one word each: lattice, duplicate, zero, nudged
    test::add_query(qs, "one" + std::to_string(u), std::array{u});
  return qs;
}

struct Answers {
  std::vector<float> matrix;
  SearchResults top;
};

Answers answers(const Index& ix, const QuerySet& qs, const SearchOptions& o, const CpuOptions& c) {
  const CpuSearcher s(ix, c);
  Answers a;
  if (o.method != Method("wmd")) a.matrix = test::matrix(s, qs, o);
  a.top = s.search(qs, 7, o);
  return a;
}

std::vector<SearchOptions> every_method() {
  std::vector<SearchOptions> out;
  for (Method m : {Method("lc-rwmd"), Method("act"), Method("ict"), Method("wmd")})
    for (const Direction direction : kDirections) {
      if (!m->has(direction)) continue;
      for (std::size_t steps : {0, 1, 2, 5}) {
        if (!m->parameter("act_steps") && steps != 1) continue;
        SearchOptions o;
        o.method = m;
        o.direction = direction;
        o.parameters.set("act_steps", static_cast<double>(steps));
        out.push_back(o);
      }
    }
  return out;
}

std::string name(const SearchOptions& o) {
  return std::string(to_string(o.method)) +
         (o.method == Method("act") ? std::to_string(act_steps(o)) : "") + " " +
         to_string(o.direction);
}

TEST(Precision, EveryPrecisionTileAndBatchGivesTheSameBits) {
  const Index ix = Index::from_data(troublesome_index(61, 150, 37, 11));
  const QuerySet qs = troublesome_queries(ix);
  const std::vector<Precision> precisions = available_precisions();
  if (precisions.size() == 1) std::printf("note: this CPU has neither bf16 nor int8\n");
  // With the word-distance cache and without it (D2 from the vectors): each its own baseline.
  for (std::size_t budget : {std::size_t{1} << 30, std::size_t{50000}})
    for (SearchOptions o : every_method()) {
      o.batch = 64;
      CpuOptions base;
      base.memory_budget = budget;
      base.precision = Precision::f32;
      const Answers want = answers(ix, qs, o, base);
      for (Precision p : precisions)
        for (std::size_t tiny : {0, 1})
          for (std::size_t batch : {std::size_t{1}, std::size_t{5}, std::size_t{64}}) {
            SearchOptions ob = o;
            ob.batch = batch;
            CpuOptions c = base;
            c.precision = p;
            if (tiny) c.tile_rows = 3, c.tile_words = 2;
            SCOPED_TRACE(name(o) + " precision " + to_string(p) + (tiny ? " tiny tiles" : "") +
                         " batch " + std::to_string(batch) + " budget " + std::to_string(budget));
            const Answers got = answers(ix, qs, ob, c);
            EXPECT_EQ(got.matrix, want.matrix);
            EXPECT_EQ(got.top.distances, want.top.distances);
            EXPECT_EQ(got.top.indices, want.top.indices);
          }
    }
}

// One-sided LC-RWMD's distances, and its top-k, against Z taken from the vectors directly,
// query by query.
void expect_exact_minimum(const Index& ix, const QuerySet& qs, const CpuOptions& c,
                          const std::string& trace) {
  const cpu::Kernels& k = cpu::kernels();
  const std::size_t m = ix.dim(), v = ix.vocab_size(), n = ix.n_docs();
  SearchOptions o;
  o.direction = Direction::document_to_query;
  o.batch = 1;
  const std::vector<float> got = test::matrix(CpuSearcher(ix, c), qs, o);
  std::vector<float> want(qs.size() * n);
  for (std::size_t q = 0; q < qs.size(); ++q) {
    std::vector<float> z(v);
    for (std::size_t u = 0; u < v; ++u) {
      float least = std::numeric_limits<float>::infinity();
      for (std::uint64_t t = qs.indptr[q]; t < qs.indptr[q + 1]; ++t)
        least = std::min(least, k.sq_dist(ix.vector(u), query_word_vector(ix, qs, qs.words[t]), m));
      z[u] = std::sqrt(least);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t b = ix.indptr()[i];
      want[q * n + i] = k.sparse_dot(ix.indices().data() + b, ix.values().data() + b,
                                     ix.indptr()[i + 1] - b, z.data());
      ASSERT_EQ(got[q * n + i], want[q * n + i]) << trace << " query " << q << " doc " << i;
    }
  }
  // Top-k finds the nearest words of the refined documents' words alone, from the bounds
  // phase 1 kept: one query at a time (documents refined in parallel) and all at once.
  for (const std::size_t batch : {1, 0}) {
    o.batch = batch;
    test::expect_topk_matches_sort(CpuSearcher(ix, c), qs, o);
  }
}

TEST(Precision, ZIsTheExactMinimum) {
  const Index ix = Index::from_data(troublesome_index(40, 120, 29, 3));
  const QuerySet qs = troublesome_queries(ix);
  for (Precision p : available_precisions()) {
    CpuOptions c;
    c.precision = p;
    expect_exact_minimum(ix, qs, c, std::string(to_string(p)));
  }
}

// Every vocabulary word nearly equidistant from many words of each query (six vectors, each
// copied to 40 words and nudged by 1e-4 of its norm, inside bf16's and int8's error bands, so
// that one of them is the nearest): every (word, query) pair looks past its least two lower
// bounds at all its query's other words; distances exact in every precision and tile shape.
TEST(Precision, ManyTiedWordsLookPastTheLeastTwo) {
  constexpr std::size_t kVocab = 240, kDim = 16, kShared = 6;
  IndexData d = test::random_index(30, kVocab, kDim, 12, 5);
  std::mt19937 rng(9);
  std::normal_distribution<float> nudge(0.0f, 1e-4f);
  for (std::size_t u = kShared; u < kVocab; ++u)
    for (std::size_t k = 0; k < kDim; ++k)
      d.vectors[u * kDim + k] = d.vectors[(u % kShared) * kDim + k] * (1.0f + nudge(rng));
  const Index ix = Index::from_data(std::move(d));
  QuerySet qs;
  for (const std::uint32_t first : {0u, 100u}) {  // two queries of 90 words
    std::vector<std::uint32_t> words(90);
    std::iota(words.begin(), words.end(), first);
    test::add_query(qs, "tied" + std::to_string(first), words);
  }
  // Default tiles, blocks of 64 batch words, tiny tiles.
  struct Tiles {
    std::size_t rows, words;
  };
  for (Precision p : available_precisions())
    for (const Tiles t : {Tiles{0, 0}, Tiles{0, 64}, Tiles{3, 2}}) {
      CpuOptions c;
      c.precision = p;
      c.tile_rows = t.rows;
      c.tile_words = t.words;
      expect_exact_minimum(ix, qs, c,
                           std::string(to_string(p)) + " tile rows " + std::to_string(t.rows) +
                               " words " + std::to_string(t.words));
    }
}

// The certificate itself: every interval holds the exact distance, in every precision, for
// vectors from 1e-3 to 1e3 and the troublesome words.
TEST(Precision, IntervalsHoldTheExactDistance) {
  const Index ix = Index::from_data(troublesome_index(30, 200, 41, 8));
  const QuerySet qs = troublesome_queries(ix);
  const BatchWords batch(ix, qs, 0, qs.size());
  for (Precision p : available_precisions())
    for (std::size_t rows : {std::size_t{5}, std::size_t{64}}) {
      const cpu::WordGemm gemm(ix, p);
      const Phase1Tiles tiles(ix, Phase1{gemm, rows, 3}, batch);
      Phase1Tiles::Workspace ws(tiles, tiles.rows());
      std::size_t tight = 0, all = 0;
      for (std::size_t t = 0; t < tiles.n_tiles(); ++t)
        for (std::size_t w0 = 0; w0 < batch.words.size(); w0 += tiles.block_words()) {
          const std::size_t wc = std::min(tiles.block_words(), batch.words.size() - w0);
          tiles.bound(ws, tiles.first_row(t), tiles.rows_in(t), w0, wc, true);
          for (std::size_t c = w0; c < w0 + wc; ++c)
            for (std::size_t r = 0; r < tiles.rows_in(t); ++r) {
              const std::size_t u = tiles.first_row(t) + r;
              const float lo = ws.lo_column(c)[r], hi = ws.hi_column(c - w0)[r];
              const float d = tiles.exact(u, c);
              ASSERT_LE(lo, d) << to_string(p) << " word " << u << " column " << c;
              ASSERT_GE(hi, d) << to_string(p) << " word " << u << " column " << c;
              ASSERT_GE(lo + 2.0f * tiles.half_width(u, c), d);
              tight += hi - lo <= 0.25f * (ix.sq_norms()[u] + batch.norms[c]) + 1e-6f;
              ++all;
            }
        }
      // Not vacuous: the intervals are narrow beside the vectors' norms.
      EXPECT_GT(static_cast<double>(tight), 0.95 * static_cast<double>(all)) << to_string(p);
    }
}

// Where strips need no estimates (int8 with VNNI), a strip's bounds from the rounded vectors
// are the bits of the GEMM's estimates bounded: tiles of every height, strips of 1 to 16 rows.
TEST(Precision, StripsAloneGiveTheGemmsBounds) {
  const Index ix = Index::from_data(troublesome_index(30, 200, 41, 9));
  const QuerySet qs = troublesome_queries(ix);
  const BatchWords batch(ix, qs, 0, qs.size());
  if (!cpu::missing_instructions(Precision::int8).empty()) GTEST_SKIP() << "no int8 here";
  const cpu::WordGemm gemm(ix, Precision::int8);
  if (!gemm.direct_bounds()) GTEST_SKIP() << "int8's bounds come from oneDNN's GEMM here";
  const std::size_t w = batch.words.size();
  for (std::size_t rows : {std::size_t{7}, std::size_t{64}, std::size_t{256}}) {
    const Phase1Tiles tiles(ix, Phase1{gemm, rows, 0}, batch);
    ASSERT_TRUE(tiles.strips_alone());
    Phase1Tiles::Workspace ws(tiles, tiles.rows());
    std::vector<float> strip(w * kStripRows);
    for (std::size_t t = 0; t < tiles.n_tiles(); ++t) {
      const std::size_t u0 = tiles.first_row(t), n = tiles.rows_in(t);
      tiles.bound(ws, u0, n, 0, w, false);
      for (std::size_t r0 = 0; r0 < n; r0 += kStripRows) {
        const std::size_t h = std::min(kStripRows, n - r0);
        tiles.bound_strip(ws, u0, r0, h, strip.data(), kStripRows);
        for (std::size_t c = 0; c < w; ++c)
          for (std::size_t r = 0; r < h; ++r)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(strip[c * kStripRows + r]),
                      std::bit_cast<std::uint32_t>(ws.lo_column(c)[r0 + r]))
                << "tile rows " << rows << " word " << u0 + r0 + r << " column " << c;
      }
    }
  }
}

// Real text: bbcsport and 20news top-10 for every method, the same in every precision. One
// test per corpus, method and direction (ACT of 1 and 5 steps), 20news's queries in two halves,
// so that each has its own time limit (the sanitizers' build runs them many times slower) and
// they share the cores. That build searches half the queries: the same code on real text for
// the sanitizers to watch, within CI's time for the whole suite (the release build checks the
// precisions on all of them).
#ifdef __SANITIZE_ADDRESS__
constexpr std::size_t kRealShare = 2;
#else
constexpr std::size_t kRealShare = 1;
#endif

struct RealCase {
  const char* corpus;
  SearchOptions options;
  std::size_t first, end;  // the queries searched
};

std::vector<RealCase> real_cases() {
  std::vector<RealCase> out;
  for (const SearchOptions& o : every_method()) {
    if (o.method == Method("act") && act_steps(o) != 1 && act_steps(o) != 5) continue;
    const bool wmd = o.method == Method("wmd");
    out.push_back({"bbcsport", o, 0, (wmd ? 20 : 40) / kRealShare});
    if (wmd) {
      out.push_back({"20news", o, 0, 4 / kRealShare});
    } else {
      out.push_back({"20news", o, 0, 12 / kRealShare});
      out.push_back({"20news", o, 12 / kRealShare, 24 / kRealShare});
    }
  }
  return out;
}

// The test's name: "20news_act5_query_to_document_12_24".
std::string case_name(const RealCase& c) {
  std::string n = std::string(c.corpus) + "_" + name(c.options) + "_" + std::to_string(c.first) +
                  "_" + std::to_string(c.end);
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}
void PrintTo(const RealCase& c, std::ostream* os) { *os << case_name(c); }

class RealCorpus : public testing::TestWithParam<RealCase> {};

TEST_P(RealCorpus, EveryPrecisionGivesTheSameTopK) {
  REQUIRE_SHARED_DATA();
  const auto& [corpus, o, first, end] = GetParam();
  const test::RealData d = test::real_corpus(corpus, 0, end);
  const QuerySet qs = subset(d.queries, first, end);
  CpuOptions base;
  base.precision = Precision::f32;
  const SearchResults want = CpuSearcher(d.index, base).search(qs, 10, o);
  for (Precision p : available_precisions()) {
    if (p == Precision::f32) continue;
    CpuOptions c;
    c.precision = p;
    const SearchResults got = CpuSearcher(d.index, c).search(qs, 10, o);
    EXPECT_EQ(got.distances, want.distances) << corpus << " " << name(o) << " " << to_string(p);
    EXPECT_EQ(got.indices, want.indices) << corpus << " " << name(o) << " " << to_string(p);
  }
}

INSTANTIATE_TEST_SUITE_P(BbcsportAnd20news, RealCorpus, testing::ValuesIn(real_cases()),
                         [](const testing::TestParamInfo<RealCase>& c) {
                           return case_name(c.param);
                         });

TEST(Precision, NamesParseAndAutoResolves) {
  for (Precision p : {Precision::automatic, Precision::f32, Precision::bf16, Precision::int8})
    EXPECT_EQ(parse_precision(to_string(p)), p);
  EXPECT_THROW(parse_precision("fp8"), Error);
  const Precision a = resolve_precision(Precision::automatic);
  EXPECT_NE(a, Precision::automatic);
  EXPECT_EQ(resolve_precision(Precision::f32), Precision::f32);
  for (Precision p : {Precision::bf16, Precision::int8}) {
    if (cpu::missing_instructions(p).empty()) {
      EXPECT_EQ(resolve_precision(p), p);
    } else {
      try {
        resolve_precision(p);
        ADD_FAILURE() << "no error for " << to_string(p);
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(cpu::missing_instructions(p)), std::string::npos)
            << e.what();
      }
    }
  }
  EXPECT_NE(describe_precision(Precision::automatic).find(to_string(a)), std::string::npos);
}

// auto is whichever of int8 and bf16 phase 1 ran faster at here, as timed; the timing gives
// each precision asked a time, in the order asked.
TEST(Precision, AutoTakesTheFasterAsTimed) {
  const std::vector<Phase1Timing>& timed = low_precisions();
  const Precision a = resolve_precision(Precision::automatic);
  if (timed.empty()) {
    EXPECT_EQ(a, Precision::f32);
  } else {
    const auto fastest =
        std::min_element(timed.begin(), timed.end(),
                         [](const Phase1Timing& x, const Phase1Timing& y) { return x.ms < y.ms; });
    EXPECT_EQ(a, fastest->precision);
    for (const Phase1Timing& t : timed) {
      EXPECT_TRUE(cpu::missing_instructions(t.precision).empty());
      if (timed.size() > 1) {
        EXPECT_TRUE(t.ms > 0 && std::isfinite(t.ms)) << t.ms;
      }
    }
    if (timed.size() > 1) {
      EXPECT_NE(timed_precisions().find(to_string(fastest->precision)), std::string::npos);
    }
  }
  const std::vector<Precision> asked{Precision::f32, Precision::f32};
  const std::vector<Phase1Timing> f32 = time_phase1(asked);
  ASSERT_EQ(f32.size(), 2u);
  for (const Phase1Timing& t : f32) {
    EXPECT_EQ(t.precision, Precision::f32);
    EXPECT_TRUE(t.ms > 0 && std::isfinite(t.ms)) << t.ms;
  }
}

// The searcher's counts: one (word, query) pair per vocabulary word and query, and the
// recomputed distances (the nearest is recomputed even where it is clear).
TEST(Precision, StatsCountWordPairsAndRecomputedDistances) {
  const Index ix = Index::from_data(troublesome_index(50, 90, 23, 4));
  const QuerySet qs = troublesome_queries(ix);
  const auto matrix_stats = [&](const CpuSearcher& s, const SearchOptions& o) {
    SearchStats st;
    s.pairwise(
        qs, o, [](std::size_t, std::size_t, const float*) {}, &st);
    return st;
  };
  for (Precision p : available_precisions()) {
    CpuOptions c;
    c.precision = p;
    const CpuSearcher s(ix, c);
    SearchOptions o;
    o.direction = Direction::document_to_query;
    SearchStats st = matrix_stats(s, o);
    EXPECT_EQ(st.word_pairs, ix.vocab_size() * qs.size());
    // Every distance: at least one per vocabulary word and distinct nearest word (queries of a
    // batch that share the word share it), at most every word of every query.
    EXPECT_GE(st.recomputed, ix.vocab_size());
    EXPECT_LE(st.recomputed, st.word_pairs * 12);
    SearchOptions single = o;
    single.batch = 1;
    st = matrix_stats(s, single);
    EXPECT_GE(st.recomputed, st.word_pairs);  // one query a batch: nothing shared
    // Top-k: only the words of the documents it refines, each once a query.
    s.search(qs, 1, o, &st);
    EXPECT_EQ(st.word_pairs, ix.vocab_size() * qs.size());
    EXPECT_GE(st.refined, qs.size());
    EXPECT_LT(st.recomputed, ix.vocab_size() * qs.size() / 2);
  }
}

// Top-k remembers the word minima it found for a query on each thread: searches of indexes of
// different vocabularies, and of batches and queries in turn, each find their own.
TEST(Search, TopKOfOneIndexAfterAnother) {
  const Index big = Index::from_data(test::random_index(80, 300, 6, 10, 21));
  const Index small = Index::from_data(test::random_index(50, 40, 6, 8, 22));
  for (const Direction direction : kDirections) {
    SearchOptions o;
    o.direction = direction;
    const QuerySet big_queries = test::mixed_queries(big, 6, 4);
    const QuerySet small_queries = test::mixed_queries(small, 6, 5);
    for (int round = 0; round < 2; ++round) {
      test::expect_topk_matches_sort(CpuSearcher(big), big_queries, o);
      test::expect_topk_matches_sort(CpuSearcher(small), small_queries, o);
    }
  }
}

// A query with no words (the library takes such a QuerySet as given), first, between others
// and last: every method leaves the other queries' distances as they are without it, and
// LC-RWMD gives the empty one what quadratic RWMD gives, in every precision and tile shape.
TEST(Search, AQueryWithNoWords) {
  const Index ix = Index::from_data(test::random_index(40, 30, 5, 6, 2));
  const QuerySet some = test::mixed_queries(ix, 4, 3);
  QuerySet qs = some;
  qs.ids.clear(), qs.labels.clear(), qs.indptr = {0}, qs.words.clear(), qs.weights.clear();
  std::vector<std::size_t> kept;  // the row in qs of each query of `some`
  const auto add_empty = [&] { test::add_query(qs, "empty" + std::to_string(qs.ids.size()), {}); };
  add_empty();
  for (std::size_t q = 0; q < some.size(); ++q) {
    if (q == 2) add_empty();
    kept.push_back(qs.ids.size());
    qs.ids.push_back(some.ids[q]);
    qs.labels.push_back(some.labels[q]);
    for (std::uint64_t p = some.indptr[q]; p < some.indptr[q + 1]; ++p) {
      qs.words.push_back(some.words[p]);
      qs.weights.push_back(some.weights[p]);
    }
    qs.indptr.push_back(qs.words.size());
  }
  add_empty();
  const std::size_t n = ix.n_docs();
  for (const Method m : methods())
    for (const Direction direction : kDirections) {
      if (!m->has(direction) || m->reads_terms()) continue;  // test_bm25.cpp
      SearchOptions o;
      o.method = m;
      o.direction = direction;
      const std::vector<float> alone = test::matrix(ix, some, o), with = test::matrix(ix, qs, o);
      for (std::size_t q = 0; q < some.size(); ++q)
        for (std::size_t i = 0; i < n; ++i)
          EXPECT_EQ(with[kept[q] * n + i], alone[q * n + i])
              << m.name() << " " << to_string(direction);
    }
  for (const Direction direction : kDirections) {
    SearchOptions o;
    o.direction = direction;
    o.method = Method("rwmd");
    const std::vector<float> want = test::matrix(ix, qs, o);
    o.method = Method("lc-rwmd");
    for (const std::size_t rows : {std::size_t{0}, std::size_t{3}})
      for (const Precision precision : available_precisions()) {
        CpuOptions c;
        c.tile_rows = rows;
        c.precision = precision;
        const std::vector<float> got = test::matrix(CpuSearcher(ix, c), qs, o);
        for (std::size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(got[i] == want[i] || std::fabs(got[i] - want[i]) <= 1e-4f * want[i])
              << to_string(direction) << " " << to_string(precision) << " " << rows << " " << i
              << ": " << got[i] << " " << want[i];
      }
  }
}

// ICT's queries of one and three words hold two slots each on average, as ACT-1's do: a batch
// of them must still sum each query over its own slots, as one query at a time does.
TEST(Search, IctBatchOfOneAndThreeWordQueries) {
  const Index ix = Index::from_data(test::random_index(40, 30, 5, 6, 4));
  QuerySet qs;
  test::add_query(qs, "0", std::array{4u});
  test::add_query(qs, "1", std::array{1u, 7u, 20u});
  for (const Direction direction : kDirections) {
    SearchOptions o;
    o.method = Method("ict");
    o.direction = direction;
    const std::vector<float> together = test::matrix(ix, qs, o);
    o.batch = 1;
    EXPECT_EQ(together, test::matrix(ix, qs, o)) << to_string(direction);
  }
}

}  // namespace
}  // namespace lcrwmd
