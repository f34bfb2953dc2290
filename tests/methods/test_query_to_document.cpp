// The query-to-document direction (D2 = R(query -> document) alone) and IDF query weights:
// every method that has the direction against its per-pair reference, its pruned top-k against
// sorting every distance, and the shapes a search box sends (one word, a word the index lacks,
// documents holding every query word, ties).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>

#include "lcrwmd/cpu.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/segments.h"
#include "methods/act/act_steps.h"
#include "methods/batch_distance.h"
#include "methods/pair_distances.h"
#include "phase1_fixture.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

constexpr Direction kQ2d = Direction::query_to_document;

SearchOptions q2d(Method m, std::size_t steps = 1) {
  SearchOptions o;
  o.method = m;
  o.direction = kQ2d;
  o.parameters.set("act_steps", static_cast<double>(steps));
  return o;
}

// Short queries, as a search box sends them: one to four words, some the index lacks.
QuerySet short_queries(const Index& ix, std::size_t n, unsigned seed) {
  QuerySet qs = test::mixed_queries(ix, 0, seed);  // three resident documents, extra words
  std::mt19937 rng(seed);
  const std::size_t v = ix.vocab_size();
  for (std::size_t q = 0; q < n; ++q) {
    std::vector<std::uint32_t> ws;
    const std::size_t h = 1 + q % 4;
    while (ws.size() < h) {
      // Mostly index words; now and then one of the five extra words (q == 1: only those).
      const auto u = static_cast<std::uint32_t>(q == 1 ? v + rng() % 5 : rng() % (v + 1));
      if (std::find(ws.begin(), ws.end(), u) == ws.end()) ws.push_back(u);
    }
    std::sort(ws.begin(), ws.end());
    test::add_query(qs, "s" + std::to_string(q), ws);
  }
  return qs;
}

// Every method with the direction: the distance matrix against the per-pair reference in
// double, and the pruned top-k byte for byte against sorting that matrix, with and without
// the word-distance cache, in batches and one query at a time, in tiny tiles.
TEST(QueryToDocument, EveryMethodAgainstItsReferenceAndTopKAgainstSorting) {
  const Index ix = Index::from_data(test::random_index(100, 80, 7, 10, 61));
  const QuerySet qs = short_queries(ix, 12, 62);
  const std::size_t n = ix.n_docs();
  struct Variant {
    Method method;
    std::size_t steps;
  };
  for (const Variant v :
       {Variant{Method("rwmd"), 1}, Variant{Method("lc-rwmd"), 1}, Variant{Method("act"), 0},
        Variant{Method("act"), 1}, Variant{Method("act"), 3}, Variant{Method("ict"), 1}}) {
    std::vector<double> want(qs.size() * n);
    for (std::size_t q = 0; q < qs.size(); ++q)
      for (std::size_t doc = 0; doc < n; ++doc)
        want[q * n + doc] =
            v.method == Method("act") || v.method == Method("ict")
                ? act_pair(ix, doc, qs, q, v.method == Method("ict") ? kIctSteps : v.steps).d2
                : rwmd_pair(ix, doc, qs, q).d2;
    struct Shape {
      std::size_t budget, batch, tiles;
    };
    for (const Shape sh : {Shape{std::size_t{1} << 30, 0, 0}, Shape{1, 1, 3},
                           Shape{std::size_t{1} << 30, 1, 3}, Shape{1, 0, 0}}) {
      SearchOptions o = q2d(v.method, v.steps);
      o.batch = sh.batch;
      const CpuSearcher s(ix, {sh.budget, sh.tiles, sh.tiles});
      const std::string what = std::string(to_string(v.method)) + std::to_string(v.steps) +
                               " budget " + std::to_string(sh.budget) + " batch " +
                               std::to_string(sh.batch) + " tiles " + std::to_string(sh.tiles);
      const std::vector<float> m = test::matrix(s, qs, o);
      for (std::size_t e = 0; e < m.size(); ++e)
        ASSERT_NEAR(m[e], want[e], 2e-5 * (1 + want[e])) << what << " entry " << e;
      test::expect_topk_matches_sort(s, qs, o);
    }
  }
}

// A short query against long documents: the bound (each query word's nearest other vocabulary
// word, lowered where the document holds the word) settles most documents, and the documents
// holding every query word come first at distance 0, ties by the smaller index.
TEST(QueryToDocument, ShortQueriesRefineFewDocumentsAndFindTheirWordsFirst) {
  const Index ix = Index::from_data(test::random_index(400, 120, 30, 12, 63));
  QuerySet qs;
  const std::vector<std::uint32_t> one = {ix.indices()[0]};  // document 0's first word
  test::add_query(qs, "one", one);
  // Two words of document 7: it, and any other document holding both, at distance 0.
  const std::uint64_t b7 = ix.indptr()[7];
  const std::vector<std::uint32_t> two = {ix.indices()[b7], ix.indices()[b7 + 1]};
  test::add_query(qs, "two", two);
  const std::size_t n = ix.n_docs(), k = 5;
  SearchStats st;
  const SearchResults r = CpuSearcher(ix).search(qs, k, q2d(Method("lc-rwmd")), &st);
  EXPECT_LT(st.refined, qs.size() * n / 2) << "the bounds settled too few documents";
  const auto holds = [&](std::size_t doc, std::span<const std::uint32_t> words) {
    const auto d = ix.indices().subspan(ix.indptr()[doc], ix.indptr()[doc + 1] - ix.indptr()[doc]);
    return std::all_of(words.begin(), words.end(), [&](std::uint32_t u) {
      return std::find(d.begin(), d.end(), u) != d.end();
    });
  };
  for (std::size_t q = 0; q < 2; ++q) {
    const std::span<const std::uint32_t> words = q == 0 ? std::span(one) : std::span(two);
    std::vector<std::int64_t> holders;
    for (std::size_t doc = 0; doc < n; ++doc)
      if (holds(doc, words)) holders.push_back(static_cast<std::int64_t>(doc));
    ASSERT_FALSE(holders.empty());
    for (std::size_t t = 0; t < std::min(k, holders.size()); ++t) {
      EXPECT_EQ(r.indices[q * k + t], holders[t]) << "query " << q << " rank " << t;
      EXPECT_EQ(r.distances[q * k + t], 0.0f);
    }
  }
  test::expect_topk_matches_sort(CpuSearcher(ix), qs, q2d(Method("lc-rwmd")));
}

// The threshold walk (query-to-document top-k over its words' postings, nearest words first)
// against refining every document (prune off): the same documents, distances and order of ties,
// for one-word to four-word queries, words the index lacks (one query of those alone), copies
// that tie, k from 1 to past where the walk hands over to the linear pass, left-out documents
// and a range; the walk must have answered most queries and met fewer documents than all.
TEST(QueryToDocument, ThresholdWalkFindsWhatEveryDocumentRanks) {
  IndexData d = test::random_index(3000, 300, 8, 9, 67);
  test::append_copies(d, 11, 40, "copy");
  const Index ix = Index::from_data(d);
  const std::size_t n = ix.n_docs();
  QuerySet qs = short_queries(ix, 24, 68);
  for (const std::size_t shape : {0, 1}) {
    SearchOptions o = q2d(Method("lc-rwmd"));
    const CpuSearcher s(ix, {std::size_t{1} << 30, shape ? 7u : 0u, shape ? 5u : 0u});
    o.batch = shape;  // one query a batch, or all in one
    for (const std::size_t k : {1u, 3u, 10u, 100u, 1000u}) {
      for (const int variant : {0, 1, 2}) {
        SearchOptions walk = o, every = o;
        every.prune = false;
        std::vector<std::uint32_t> skip;  // the options' span views it
        if (variant == 1) {  // left-out documents: every third, and a run holding the copies
          for (std::uint32_t i = 0; i < n; ++i)
            if (i % 3 == 0 || (i >= 3000 && i < 3020)) skip.push_back(i);
          walk.skip = every.skip = skip;
        }
        if (variant == 2) walk.max_distance = every.max_distance = 2.5f;
        SearchStats st;
        const SearchResults got = s.search(qs, k, walk, &st), want = s.search(qs, k, every);
        const std::string what = "k " + std::to_string(k) + " variant " + std::to_string(variant) +
                                 " shape " + std::to_string(shape);
        ASSERT_EQ(got.indices, want.indices) << what;
        ASSERT_EQ(got.distances, want.distances) << what;
        if (k <= 10 && variant != 2) {
          EXPECT_GT(st.walked, qs.size() / 2) << what;
          EXPECT_LT(st.refined, qs.size() * n / 4) << what;
        }
      }
    }
  }
}

// Vectors on a small integer grid: words at equal distances, documents at equal distances and
// bounds met exactly, so that the walk's start from each word's nearest word (rarest list first,
// documents bounded by which nearest words they hold) and its stops must break ties as sorting
// does: a bound raised by a hair, or a stop on equality, loses a document here.
TEST(QueryToDocument, WalkBreaksTiesAsSortingOnAGrid) {
  IndexData d = test::random_index(2500, 60, 4, 6, 71);
  for (float& x : d.vectors) x = std::nearbyint(x);
  test::append_copies(d, 5, 12, "copy");
  const Index ix = Index::from_data(d);
  QuerySet qs;
  std::mt19937 rng(72);
  for (std::size_t q = 0; q < 60; ++q) {
    std::vector<std::uint32_t> ws;
    while (ws.size() < 2 + q % 3) {
      const auto u = static_cast<std::uint32_t>(rng() % ix.vocab_size());
      if (std::find(ws.begin(), ws.end(), u) == ws.end()) ws.push_back(u);
    }
    std::sort(ws.begin(), ws.end());
    std::string name = "g";  // appended: GCC 12 warns of "g" + std::string (-Wrestrict)
    name += std::to_string(q);
    test::add_query(qs, name, ws);
  }
  const CpuSearcher s(ix);
  std::vector<std::uint32_t> skip;
  for (std::uint32_t i = 0; i < ix.n_docs(); i += 4) skip.push_back(i);
  for (const std::size_t k : {1u, 2u, 7u, 10u, 40u}) {
    for (const int variant : {0, 1, 2}) {
      SearchOptions walk = q2d(Method("lc-rwmd")), every = walk;
      every.prune = false;
      if (variant == 1) walk.skip = every.skip = skip;
      if (variant == 2) walk.max_distance = every.max_distance = 1.0f;
      SearchStats st;
      const SearchResults got = s.search(qs, k, walk, &st), want = s.search(qs, k, every);
      const std::string what = "k " + std::to_string(k) + " variant " + std::to_string(variant);
      ASSERT_EQ(got.indices, want.indices) << what;
      ASSERT_EQ(got.distances, want.distances) << what;
      if (variant == 0) {
        EXPECT_GT(st.walked, qs.size() / 2) << what;
      }
    }
  }
}

// Documents that are copies of each other tie exactly: the smaller index first, pruned or not.
TEST(QueryToDocument, TiesBetweenCopiesAreBrokenByIndex) {
  IndexData d = test::random_index(30, 40, 6, 6, 64);
  test::append_copies(d, 4, 3, "copy");
  const Index ix = Index::from_data(d);
  const QuerySet qs = short_queries(ix, 8, 65);
  for (const Method m : {Method("lc-rwmd"), Method("act"), Method("ict")})
    test::expect_topk_matches_sort(CpuSearcher(ix), qs, q2d(m));
}

// Many documents' distances at once (the hybrid's sample) are each document's own, bit for
// bit: with the word-distance cache (int8's wide bounds leave several words of a document in
// reach) and without, one query a batch (packed rows) and all in one, in tiny tiles; short
// queries and a long one; documents in any order, repeated, empty lists, and calls in turn
// reusing the thread's scratch.
TEST(QueryToDocument, ManyDocumentsAtOnceAreEachOnesOwn) {
  IndexData d = test::random_index(700, 90, 6, 9, 81);
  test::append_copies(d, 7, 5, "copy");
  const Index ix = Index::from_data(d);
  QuerySet qs = short_queries(ix, 12, 82);
  std::vector<std::uint32_t> long_query(70);  // past the words shared at once: one at a time
  std::iota(long_query.begin(), long_query.end(), 10u);
  test::add_query(qs, "long", long_query);
  std::mt19937 rng(83);
  std::vector<std::vector<std::uint32_t>> lists(3);
  for (std::uint32_t i = 0; i < ix.n_docs(); ++i) lists[0].push_back(i);
  std::reverse(lists[0].begin(), lists[0].end());
  for (int r = 0; r < 300; ++r)  // at random, repeats among them
    lists[1].push_back(static_cast<std::uint32_t>(rng() % ix.n_docs()));
  for (const Precision p : {Precision::f32, Precision::int8}) {
    const test::Phase1Fixture ph(ix, p, 7);
    for (const std::size_t budget : {std::size_t{0}, std::size_t{1} << 30})
      for (const std::size_t per_batch : {std::size_t{1}, qs.size()})
        for (std::size_t b0 = 0; b0 < qs.size(); b0 += per_batch) {
          const QueryRange range{qs, b0, std::min(qs.size(), b0 + per_batch)};
          auto m = make_lc_rwmd(ix, range, kQ2d, ph.phase1, budget, Rows::distances);
          std::vector<float> rows(range.size() * ix.n_docs());
          m->compute(rows.data());
          for (std::size_t j = 0; j < range.size(); ++j)
            for (const auto& docs : lists) {
              std::vector<float> got(docs.size(), -1.0f);
              m->refine_each(j, docs, got.data());
              for (std::size_t i = 0; i < docs.size(); ++i)
                ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]),
                          std::bit_cast<std::uint32_t>(m->refine(j, docs[i], 0)))
                    << to_string(p) << " budget " << budget << " query " << b0 + j << " document "
                    << docs[i];
            }
        }
  }
}

// The direction is a relaxation's alone: WMD and WCD refuse it, and so do pairs and clustering
// (whose distances must not depend on the order of a pair).
TEST(QueryToDocument, RefusedWhereItIsNotDefined) {
  const Index ix = Index::from_data(test::random_index(20, 30, 5, 4, 66));
  const QuerySet qs = short_queries(ix, 2, 67);
  for (const Method m : {Method("wmd"), Method("wcd")})
    EXPECT_THROW(search(ix, qs, 3, q2d(m)), OptionError) << to_string(m);
}

// ---- IDF query weights ------------------------------------------------------------------

RawDocument doc(std::string id, std::string text) {
  RawDocument d;
  d.id = std::move(id);
  d.text = std::move(text);
  return d;
}

IndexData small_corpus(Weighting weighting) {
  // Five words in 2-d; "common" in every document, "rare" in one.
  const Embeddings e({"common", "rare", "mid", "other", "more"},
                     {0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 2.0f, 0.5f}, 2);
  BuildOptions b;
  b.weighting = weighting;
  return build_index_data(e,
                          {doc("a", "common rare"), doc("b", "common mid mid"),
                           doc("c", "common mid other"), doc("d", "common more")},
                          b);
}

// idf weighs each query word by count x idf, normalised, whatever the index's weighting; index
// keeps the index's; auto is idf for query-to-document alone.
TEST(QueryWeights, IdfWeighsRareWordsUpAndAutoFollowsTheDirection) {
  for (const Weighting w : {Weighting::tf, Weighting::tfidf}) {
    const Index ix = Index::from_data(small_corpus(w));
    const std::vector<RawDocument> q = {doc("q", "common common rare")};
    QueryOptions o;
    o.weights = QueryWeights::idf;
    const QuerySet idf_set = make_query_set(ix, q, o);
    ASSERT_EQ(idf_set.words.size(), 2u);
    const auto common = *ix.find_word("common"), rare = *ix.find_word("rare");
    const double wc = 2 * idf(4, ix.doc_freq(common)), wr = 1 * idf(4, ix.doc_freq(rare));
    for (std::size_t p = 0; p < 2; ++p) {
      const double want = (idf_set.words[p] == common ? wc : wr) / (wc + wr);
      EXPECT_FLOAT_EQ(idf_set.weights[p], static_cast<float>(want));
    }
    o.weights = QueryWeights::index;
    const QuerySet index_set = make_query_set(ix, q, o);
    if (w == Weighting::tfidf) {
      EXPECT_EQ(index_set.weights, idf_set.weights);
    } else {
      for (std::size_t p = 0; p < 2; ++p)
        EXPECT_FLOAT_EQ(index_set.weights[p], index_set.words[p] == common ? 2.0f / 3 : 1.0f / 3);
    }
  }
  EXPECT_EQ(parse_query_weights("auto", Direction::query_to_document), QueryWeights::idf);
  EXPECT_EQ(parse_query_weights("auto", Direction::symmetric), QueryWeights::index);
  EXPECT_EQ(parse_query_weights("auto", Direction::document_to_query), QueryWeights::index);
  EXPECT_EQ(parse_query_weights("index", Direction::query_to_document), QueryWeights::index);
  EXPECT_THROW(parse_query_weights("bm25", Direction::symmetric), Error);
}

// A collection of indexes built apart (each counting its own documents) weighs a query by the
// sum of their document frequencies: the weights of one index of all the documents.
TEST(QueryWeights, ShardsBuiltApartWeighAsOneIndex) {
  const IndexData whole = small_corpus(Weighting::tf);
  const std::vector<IndexData> parts = split_index_data(whole, 2);
  // As if built apart: each shard counts its own documents.
  std::vector<Index> apart;
  for (IndexData p : parts) {
    std::vector<std::uint32_t> df(p.vocab.size(), 0);
    for (const std::uint32_t u : p.indices) ++df[u];
    p.doc_freq = df;
    p.idf_docs = 0;
    apart.push_back(Index::from_data(p));
  }
  ASSERT_EQ(apart[0].idf_docs(), apart[0].n_docs());
  const SegmentSet shards({&apart[0], &apart[1]});
  const Index one = Index::from_data(whole);
  QueryOptions o;
  o.weights = QueryWeights::idf;
  const std::vector<RawDocument> q = {doc("q", "common rare mid more")};
  const QuerySet a = shards.make_query_set(q, o), b = make_query_set(one, q, o);
  ASSERT_EQ(a.words.size(), b.words.size());
  for (std::size_t p = 0; p < a.words.size(); ++p) {
    const std::string_view wa =
        a.words[p] < apart[0].vocab_size()
            ? apart[0].word(a.words[p])
            : std::string_view(a.extra_words[a.words[p] - apart[0].vocab_size()]);
    const std::size_t pb =
        std::find(b.words.begin(), b.words.end(), *one.find_word(wa)) - b.words.begin();
    EXPECT_FLOAT_EQ(a.weights[p], b.weights[pb]) << wa;
  }
}

}  // namespace
}  // namespace lcrwmd
