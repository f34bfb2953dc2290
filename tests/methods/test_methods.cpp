// Every fast path against the slow reference: LC-RWMD (one-sided and symmetric, every batch
// size and tile shape, with and without the distance cache) against RWMD computed pair by
// pair in double; WCD against centroids computed here; top-k against a full sort.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/search.h"
#include "lcrwmd/topk.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

// RWMD by definition, in double: both directions from one cost matrix.
std::pair<double, double> reference_rwmd(const Index& ix, std::size_t doc, const QuerySet& qs,
                                         std::size_t q) {
  const auto ip = ix.indptr();
  const std::size_t dh = ip[doc + 1] - ip[doc], qh = qs.length(q);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> row(dh, inf), col(qh, inf);
  for (std::size_t p = 0; p < dh; ++p) {
    const float* a = ix.vector(ix.indices()[ip[doc] + p]);
    for (std::size_t t = 0; t < qh; ++t) {
      const float* b = query_word_vector(ix, qs, qs.words[qs.indptr[q] + t]);
      double s = 0;
      for (std::size_t k = 0; k < ix.dim(); ++k) s += (double{a[k]} - b[k]) * (double{a[k]} - b[k]);
      row[p] = std::min(row[p], std::sqrt(s));
      col[t] = std::min(col[t], std::sqrt(s));
    }
  }
  double d1 = 0, d2 = 0;
  for (std::size_t p = 0; p < dh; ++p) d1 += ix.values()[ip[doc] + p] * row[p];
  for (std::size_t t = 0; t < qh; ++t) d2 += qs.weights[qs.indptr[q] + t] * col[t];
  return {d1, d2};
}

void expect_close(float got, double want, const std::string& what) {
  ASSERT_TRUE(std::isfinite(got)) << what;
  ASSERT_NEAR(got, want, 2e-5 * std::max(1.0, std::abs(want))) << what;
}

struct LcCase {
  Direction direction;
  std::size_t batch, tile_rows, tile_words, budget;
};

void PrintTo(const LcCase& c, std::ostream* os) {
  *os << to_string(c.direction) << " batch " << c.batch << " tile " << c.tile_rows << "x"
      << c.tile_words << " budget " << c.budget;
}

constexpr Direction kSym = Direction::symmetric, kD2q = Direction::document_to_query,
                    kQ2d = Direction::query_to_document;

class LcRwmdVsReference : public ::testing::TestWithParam<LcCase> {};

TEST_P(LcRwmdVsReference, EqualsQuadraticRwmd) {
  const LcCase c = GetParam();
  const Index ix = Index::from_data(test::random_index(131, 97, 13, 15, 7));
  const QuerySet qs = test::mixed_queries(ix, 9, 11);
  SearchOptions o;
  o.method = Method("lc-rwmd");
  o.direction = c.direction;
  o.batch = c.batch;
  const CpuSearcher tiled(ix, {c.budget, c.tile_rows, c.tile_words});
  const std::vector<float> got = test::matrix(tiled, qs, o);
  o.method = Method("rwmd");
  const std::vector<float> quad = test::matrix(tiled, qs, o);
  for (std::size_t q = 0; q < qs.size(); ++q)
    for (std::size_t i = 0; i < ix.n_docs(); ++i) {
      const auto [d1, d2] = reference_rwmd(ix, i, qs, q);
      const double want = test::directed(c.direction, d1, d2);
      const std::string at = "query " + std::to_string(q) + " doc " + std::to_string(i);
      expect_close(got[q * ix.n_docs() + i], want, "lc-rwmd " + at);
      expect_close(quad[q * ix.n_docs() + i], want, "rwmd " + at);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LcRwmdVsReference,
    ::testing::Values(LcCase{kSym, 64, 0, 0, 1u << 30}, LcCase{kD2q, 64, 0, 0, 1u << 30},
                      LcCase{kQ2d, 64, 0, 0, 1u << 30}, LcCase{kSym, 1, 0, 0, 1u << 30},
                      LcCase{kQ2d, 1, 0, 0, 1u << 30}, LcCase{kSym, 5, 1, 1, 1u << 30},
                      LcCase{kD2q, 3, 7, 2, 1u << 30}, LcCase{kQ2d, 3, 7, 2, 1u << 30},
                      LcCase{kSym, 4, 3, 5, 1u << 30},
                      // No room for the distance cache: D2 from direct distances.
                      LcCase{kSym, 64, 0, 0, 1}, LcCase{kSym, 2, 5, 3, 1}, LcCase{kQ2d, 2, 5, 3, 1},
                      // Budgets that split the batch.
                      LcCase{kSym, 64, 16, 8, 8000}, LcCase{kD2q, 64, 16, 8, 8000},
                      LcCase{kQ2d, 64, 16, 8, 8000}),
    [](const ::testing::TestParamInfo<LcCase>& p) {
      const LcCase& c = p.param;
      const char* side = c.direction == kSym ? "sym" : c.direction == kD2q ? "onesided" : "q2d";
      return std::string(side) + "_batch" + std::to_string(c.batch) + "_tile" +
             std::to_string(c.tile_rows) + "x" + std::to_string(c.tile_words) + "_budget" +
             std::to_string(c.budget);
    });

TEST(Methods, DocumentAgainstItselfIsZero) {
  const Index ix = Index::from_data(test::random_index(60, 50, 11, 20, 3));
  std::vector<std::size_t> all(ix.n_docs());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const QuerySet qs = query_set_from_index(ix, all);
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd")})
    for (const Direction direction : kDirections)
      for (std::size_t tiles : {0u, 3u}) {
        if (!m->has(direction)) continue;
        SearchOptions o;
        o.method = m;
        o.direction = direction;
        o.batch = 7;
        const CpuSearcher tiled(ix, {CpuOptions{}.memory_budget, tiles, tiles});
        const auto d = test::matrix(tiled, qs, o);
        for (std::size_t i = 0; i < ix.n_docs(); ++i)
          ASSERT_EQ(d[i * ix.n_docs() + i], 0.0f) << to_string(m) << " doc " << i;
        // And search finds each document first.
        const SearchResults r = tiled.search(qs, 1, o);
        for (std::size_t i = 0; i < ix.n_docs(); ++i) ASSERT_EQ(r.distances[i], 0.0f);
      }
}

TEST(Methods, WcdMatchesDirectCentroids) {
  const Index ix = Index::from_data(test::random_index(40, 30, 9, 8, 5));
  const QuerySet qs = test::mixed_queries(ix, 6, 2);
  SearchOptions o;
  o.method = Method("wcd");
  const auto d = test::matrix(ix, qs, o);
  const std::size_t m = ix.dim();
  auto centroid = [&](auto words, auto weights, std::size_t h, auto vec) {
    std::vector<double> c(m, 0.0);
    for (std::size_t p = 0; p < h; ++p)
      for (std::size_t k = 0; k < m; ++k) c[k] += weights[p] * vec(words[p])[k];
    return c;
  };
  for (std::size_t q = 0; q < qs.size(); ++q) {
    const auto cq =
        centroid(qs.words.data() + qs.indptr[q], qs.weights.data() + qs.indptr[q], qs.length(q),
                 [&](std::uint32_t u) { return query_word_vector(ix, qs, u); });
    for (std::size_t i = 0; i < ix.n_docs(); ++i) {
      const auto b = ix.indptr()[i];
      const auto ci =
          centroid(ix.indices().data() + b, ix.values().data() + b, ix.indptr()[i + 1] - b,
                   [&](std::uint32_t u) { return ix.vector(u); });
      double s = 0;
      for (std::size_t k = 0; k < m; ++k) s += (ci[k] - cq[k]) * (ci[k] - cq[k]);
      expect_close(d[q * ix.n_docs() + i], std::sqrt(s), "wcd");
    }
  }
}

TEST(Search, TopKMatchesFullSort) {
  IndexData d = test::random_index(257, 80, 10, 12, 9);
  d.indptr.resize(d.indptr.size() - 2);  // and make the last documents duplicates: ties
  d.ids.resize(d.ids.size() - 2);
  d.labels.resize(d.labels.size() - 2);
  d.indices.resize(d.indptr.back());
  d.values.resize(d.indptr.back());
  test::append_copies(d, 5, 2, "dup");
  const Index ix = Index::from_data(d);
  const QuerySet qs = test::mixed_queries(ix, 12, 4);
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("wmd")})
    for (const Direction direction : kDirections) {
      if (!m->has(direction)) continue;
      SearchOptions o;
      o.method = m;
      o.direction = direction;
      o.batch = 5;
      test::expect_topk_matches_sort(CpuSearcher(ix), qs, o);
    }
}

TEST(Search, EmptyQuerySetAndKLargerThanIndex) {
  const Index ix = Index::from_data(test::random_index(5, 10, 4, 3, 1));
  const SearchResults none = search(ix, QuerySet{}, 3, {});
  EXPECT_EQ(none.n_queries, 0u);
  const std::vector<std::size_t> one = {2};
  const SearchResults all = search(ix, query_set_from_index(ix, one), 50, {});
  ASSERT_EQ(all.k, 5u);
  EXPECT_EQ(all.indices[0], 2);
  for (std::size_t j = 1; j < all.k; ++j) EXPECT_LE(all.distances[j - 1], all.distances[j]);
}

// The same checks on a real corpus and real embeddings.
TEST(RealCorpus, LcRwmdEqualsQuadraticOnBbcsport) {
  REQUIRE_SHARED_DATA();
  const test::RealData d = test::bbcsport(80, 16);
  const Index& ix = d.index;
  const QuerySet& qs = d.queries;
  ASSERT_EQ(qs.size(), 16u);
  EXPECT_FALSE(qs.extra_words.empty());
  std::vector<std::pair<double, double>> ref(qs.size() * ix.n_docs());
#pragma omp parallel for schedule(dynamic)
  for (std::size_t x = 0; x < ref.size(); ++x)
    ref[x] = reference_rwmd(ix, x % ix.n_docs(), qs, x / ix.n_docs());
  for (const Direction direction : kDirections) {
    SearchOptions o;
    o.direction = direction;
    o.method = Method("rwmd");
    const auto quad = test::matrix(ix, qs, o);
    for (std::size_t tiles : {0u, 5u}) {
      o.method = Method("lc-rwmd");
      o.batch = tiles ? 7 : 64;
      const CpuSearcher tiled(ix, {CpuOptions{}.memory_budget, tiles, tiles});
      const auto lc = test::matrix(tiled, qs, o);
      for (std::size_t x = 0; x < lc.size(); ++x) {
        const auto [d1, d2] = ref[x];
        expect_close(lc[x], test::directed(direction, d1, d2), "lc-rwmd bbcsport");
        expect_close(quad[x], test::directed(direction, d1, d2), "rwmd bbcsport");
      }
      test::expect_topk_matches_sort(tiled, qs, o);
    }
  }
}

// Degenerate shapes: one document, one word, dimension 1; a query word absent from the index.
TEST(Methods, DegenerateShapes) {
  for (std::size_t dim : {1u, 2u, 9u}) {
    const Index ix = Index::from_data(test::random_index(1, 1, dim, 1, 13));
    QuerySet qs = query_set_from_index(ix, std::vector<std::size_t>{0});
    qs.extra_words = {"x"};
    qs.extra_vectors.assign(dim, 0.25f);
    test::add_query(qs, "x", std::array{1u});  // a second query: only the extra word
    for (Method m :
         {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("act"), Method("ict")}) {
      SearchOptions o;
      o.method = m;
      const SearchResults r = search(ix, qs, 3, o);
      ASSERT_EQ(r.k, 1u);
      EXPECT_EQ(r.distances[0], 0.0f);
      double want = 0;
      for (std::size_t k = 0; k < dim; ++k)
        want += (double{ix.vector(0)[k]} - 0.25) * (double{ix.vector(0)[k]} - 0.25);
      expect_close(r.distances[1], std::sqrt(want), to_string(m));
    }
  }
}

// TF-IDF: a query with the text of a resident document gets bit-identical weights (the
// index's document frequencies), so it is at distance exactly 0 under every method.
TEST(RealCorpus, TfIdfQueryOfResidentTextIsAtZero) {
  REQUIRE_SHARED_DATA();
  const std::string data = test::shared_data();
  const Embeddings emb = Embeddings::load(data + "/embeddings/small.vec");
  const StopWords stop = StopWords::load(data + "/stop_words.txt");
  auto docs = read_tsv(data + "/corpora/twitter/train.tsv");
  docs.resize(300);
  BuildOptions bo;
  bo.stopwords = &stop;
  bo.weighting = Weighting::tfidf;
  TextReport report;
  const Index ix = Index::from_data(build_index_data(emb, docs, bo, &report));
  EXPECT_FALSE(report.empty_documents.empty());  // small.vec misses many tweets' words
  const QuerySet qs = make_query_set(ix, docs, {});
  ASSERT_EQ(qs.size(), ix.n_docs());
  for (Method m : {Method("wcd"), Method("rwmd"), Method("lc-rwmd")}) {
    SearchOptions o;
    o.method = m;
    const SearchResults r = search(ix, qs, 1, o);
    for (std::size_t q = 0; q < qs.size(); ++q) ASSERT_EQ(r.distances[q], 0.0f) << to_string(m);
  }
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd {
namespace {

// A shard computes exactly what the whole index computes for its documents: the distributed
// search's results are byte for byte the single process's.
TEST(Shard, SameDistancesAsTheWholeIndex) {
  const Index ix = Index::from_data(test::random_index(97, 60, 9, 12, 21));
  const QuerySet qs = test::mixed_queries(ix, 7, 5);
  for (Method method : {Method("wcd"), Method("rwmd"), Method("lc-rwmd"), Method("wmd")})
    for (const Direction direction : kDirections) {
      if (!method->has(direction)) continue;
      SearchOptions o;
      o.method = method;
      o.direction = direction;
      const std::vector<float> whole = test::matrix(ix, qs, o);
      for (auto [begin, end] : {std::pair<std::size_t, std::size_t>{0, 40}, {40, 41}, {41, 97}}) {
        const Index part = ix.shard(begin, end);
        ASSERT_EQ(part.n_docs(), end - begin);
        EXPECT_EQ(part.doc_id(0), ix.doc_id(begin));
        EXPECT_EQ(part.label(end - begin - 1), ix.label(end - 1));
        const std::vector<float> got = test::matrix(part, qs, o);
        for (std::size_t q = 0; q < qs.size(); ++q)
          for (std::size_t i = begin; i < end; ++i)
            ASSERT_EQ(got[q * part.n_docs() + i - begin], whole[q * ix.n_docs() + i])
                << to_string(method) << " query " << q << " doc " << i;
      }
    }
  EXPECT_THROW(ix.shard(10, 98), Error);
  // A shard of a shard: documents [45, 60) of the whole, as the shard [40, 97) holds them.
  const Index outer = ix.shard(40, 97);
  const Index inner = outer.shard(5, 20);
  ASSERT_EQ(inner.n_docs(), 15u);
  for (std::size_t i = 0; i < inner.n_docs(); ++i) {
    EXPECT_EQ(inner.doc_id(i), ix.doc_id(45 + i));
    const auto a =
        inner.indices().subspan(inner.indptr()[i], inner.indptr()[i + 1] - inner.indptr()[i]);
    const auto b =
        ix.indices().subspan(ix.indptr()[45 + i], ix.indptr()[46 + i] - ix.indptr()[45 + i]);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "document " << i;
  }
}

}  // namespace
}  // namespace lcrwmd
