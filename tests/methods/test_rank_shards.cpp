// Searchers over ranks, threads standing in for mpirun's: a shard per rank (RankShards,
// lcrwmd/segments.h) and the queries spread (RankQueries): the bytes of one process, search and
// pairwise, shared pruning, failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

#include "lcrwmd/corpus.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/rank_queries.h"
#include "lcrwmd/rank_shards.h"
#include "methods/segment_fixtures.h"

namespace lcrwmd {
namespace {

using test::every_method;
using test::name;
using test::on_ranks;
using test::split;
using test::Split;
using test::word_queries;

// A shard per rank (threads standing in for mpirun's ranks) gives the bytes of the same shards
// searched in one process, for every method, TF and TF-IDF.
TEST(RankShards, TheSameBytesAsTheShardsInOneProcess) {
  for (const Weighting weighting : {Weighting::tf, Weighting::tfidf}) {
    IndexData data = test::random_index(90, 150, 6, 9, 17);
    data.weighting = weighting;
    const Split s = split(data, 3);
    const SegmentSet set(s.pointers());
    const std::vector<RawDocument> docs = word_queries();
    const QuerySet q = set.make_query_set(docs, {});
    ASSERT_EQ(q.size(), docs.size());
    for (const SearchOptions& o : every_method()) {
      const SearchResults want = CollectionSearcher(set, {}).search(q, 5, o);
      SearchResults got;
      std::vector<std::string> ids;
      on_ranks(3, [&](int r, Communicator& comm) {
        RankShards shards(comm, s.files[static_cast<std::size_t>(r)], {});
        EXPECT_EQ(shards.n_docs(), set.n_docs());
        EXPECT_FALSE(shards.shares_vocabulary());
        const QuerySet mine = shards.make_query_set(r == 0 ? docs : std::vector<RawDocument>{}, {});
        const SearchResults res = shards.search(mine, 5, o);
        const std::vector<std::string> names = shards.doc_ids(res.indices);
        if (r == 0) got = res, ids = names;
      });
      EXPECT_EQ(got.distances, want.distances) << name(o);
      EXPECT_EQ(got.indices, want.indices) << name(o);
      for (std::size_t e = 0; e < ids.size(); ++e)
        EXPECT_EQ(ids[e], set.doc_id(static_cast<std::size_t>(got.indices[e]))) << name(o);
    }
  }
}

// The full matrix, a shard per rank: the in-process collection's, byte for byte.
TEST(RankShards, PairwiseGivesTheCollectionsMatrix) {
  const Split s = split(test::random_index(70, 120, 5, 8, 23), 3);
  const SegmentSet set(s.pointers());
  const std::vector<RawDocument> docs = word_queries();
  const QuerySet q = set.make_query_set(docs, {});
  for (const SearchOptions& o : every_method()) {
    const std::vector<float> want = test::matrix(CollectionSearcher(set, {}), q, o);
    std::vector<float> got;
    on_ranks(3, [&](int r, Communicator& comm) {
      RankShards shards(comm, s.files[static_cast<std::size_t>(r)], {});
      const QuerySet mine = shards.make_query_set(r == 0 ? docs : std::vector<RawDocument>{}, {});
      const std::size_t n = shards.n_docs();
      shards.pairwise(mine, o, [&](std::size_t first, std::size_t rows, const float* d) {
        got.resize(std::max(got.size(), (first + rows) * n));
        std::copy(d, d + rows * n, got.begin() + static_cast<std::ptrdiff_t>(first * n));
      });
    });
    EXPECT_EQ(got, want) << name(o);
  }
}

// A collection's segments (built apart, some with deleted documents), a run of them per rank:
// every method, bm25 and the hybrid with them (their statistics every rank's sums, the hybrid's
// standardisation over every rank's evidence), and --query-weights idf, give the one process's
// bytes, top-k and matrix.
TEST(RankShards, ACollectionsSegmentsARunPerRankAnswerAsOneProcess) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo/";
  const Embeddings emb = Embeddings::load(demo + "embeddings.bin");
  const StopWords stop = StopWords::load(demo + "stop_words.txt");
  const std::vector<RawDocument> docs = read_tsv(demo + "train.tsv");
  std::vector<RawDocument> queries = read_tsv(demo + "queries.tsv");
  queries.resize(4);
  BuildOptions bo;
  bo.stopwords = &stop;
  std::vector<Index> segments;
  const std::size_t bounds[] = {0, 30, 45, 90, docs.size()};
  for (std::size_t s = 0; s + 1 < std::size(bounds); ++s)
    segments.push_back(Index::from_data(
        build_index_data(emb,
                         {docs.begin() + static_cast<std::ptrdiff_t>(bounds[s]),
                          docs.begin() + static_cast<std::ptrdiff_t>(bounds[s + 1])},
                         bo)));
  // Segment 0 and 2 lose documents (2 all but a few: its words' counts fall).
  std::vector<std::vector<std::uint32_t>> deleted(segments.size());
  for (std::uint32_t i = 0; i < segments[0].n_docs(); i += 5) deleted[0].push_back(i);
  for (std::uint32_t i = 3; i < segments[2].n_docs(); ++i) deleted[2].push_back(i);
  const auto set_of = [&](std::size_t begin, std::size_t end) {
    std::vector<const Index*> ix;
    std::vector<std::span<const std::uint32_t>> del;
    for (std::size_t s = begin; s < end; ++s) ix.push_back(&segments[s]), del.push_back(deleted[s]);
    return SegmentSet(ix, del);
  };
  const SegmentSet whole = set_of(0, segments.size());
  std::vector<SearchOptions> searches;
  for (const Method m : methods())
    for (const Direction d : kDirections)
      if (m->has(d)) {
        SearchOptions o;
        o.method = m;
        o.direction = d;
        o.parameters.set("act_steps", 2);
        searches.push_back(o);
      }
  for (const QueryWeights weights : {QueryWeights::index, QueryWeights::idf})
    for (const int ranks : {2, 3}) {
      QueryOptions qo;
      qo.embeddings = &emb;
      qo.weights = weights;
      qo.keep_term_only = true;
      const QuerySet q = whole.make_query_set(queries, qo);
      for (const SearchOptions& o : searches) {
        // Every method over 3 ranks; over 2, and with IDF weights, those the statistics change.
        const bool statistics =
            o.method->reads_terms() ||
            (o.method == Method("lc-rwmd") && o.direction == Direction::query_to_document);
        if ((weights == QueryWeights::idf || ranks == 2) && !statistics) continue;
        const CollectionSearcher one(whole, {});
        const SearchResults want = one.search(q, 6, o);
        // The matrix too, but WMD's (every pair solved: slow, and its rows travel as others do).
        const bool matrix_too = !o.method->costly_exact;
        const std::vector<float> matrix =
            matrix_too ? test::matrix(one, q, o) : std::vector<float>();
        SearchResults got;
        std::vector<float> rows;
        on_ranks(ranks, [&](int r, Communicator& comm) {
          const std::size_t n = segments.size(), rank = static_cast<std::size_t>(r);
          const SegmentSet mine = set_of(n * rank / static_cast<std::size_t>(ranks),
                                         n * (rank + 1) / static_cast<std::size_t>(ranks));
          RankShards shards(comm, mine, {});
          EXPECT_EQ(shards.n_docs(), whole.n_docs());
          const QuerySet mq =
              shards.make_query_set(r == 0 ? queries : std::vector<RawDocument>{}, qo);
          const SearchResults res = shards.search(mq, 6, o);
          if (r == 0) got = res;
          if (matrix_too)
            shards.pairwise(mq, o, [&](std::size_t first, std::size_t count, const float* d) {
              const std::size_t w = shards.n_docs();
              rows.resize(std::max(rows.size(), (first + count) * w));
              std::copy(d, d + count * w, rows.begin() + static_cast<std::ptrdiff_t>(first * w));
            });
        });
        const std::string what = name(o) + (weights == QueryWeights::idf ? " idf, " : ", ") +
                                 std::to_string(ranks) + " ranks";
        EXPECT_EQ(got.distances, want.distances) << what;
        EXPECT_EQ(got.indices, want.indices) << what;
        EXPECT_EQ(rows, matrix) << what;
      }
    }
}

// A failure on one rank is an Error on every rank, none left waiting.
TEST(RankShards, AFailureOnOneRankIsAnErrorOnAll) {
  const Split s = split(test::random_index(40, 60, 4, 6, 3), 2);
  IndexData other = test::random_index(20, 30, 5, 6, 3);  // another dimension
  const Index odd = Index::from_data(other);
  std::vector<int> errors(2, 0);
  on_ranks(2, [&](int r, Communicator& comm) {
    try {
      RankShards shards(comm, r == 0 ? s.files[0] : odd, {});
    } catch (const Error&) {
      errors[static_cast<std::size_t>(r)] = 1;
    }
  });
  EXPECT_EQ(errors, (std::vector<int>{1, 1}));
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd {
namespace {

// `d` with documents `at` made copies of one document: `words` (ascending ids), with `counts`.
IndexData with_copies(const IndexData& d, const std::vector<std::size_t>& at,
                      const std::vector<std::uint32_t>& words, const std::vector<float>& counts) {
  IndexData out = d;
  out.indptr = {0};
  out.indices.clear();
  out.values.clear();
  out.doc_freq.assign(d.vocab.size(), 0);
  float total = 0;
  for (const float c : counts) total += c;
  for (std::size_t i = 0; i + 1 < d.indptr.size(); ++i) {
    if (std::find(at.begin(), at.end(), i) != at.end()) {
      out.indices.insert(out.indices.end(), words.begin(), words.end());
      for (const float c : counts) out.values.push_back(c / total);
    } else {
      out.indices.insert(out.indices.end(), d.indices.begin() + d.indptr[i],
                         d.indices.begin() + d.indptr[i + 1]);
      out.values.insert(out.values.end(), d.values.begin() + d.indptr[i],
                        d.values.begin() + d.indptr[i + 1]);
    }
    out.indptr.push_back(out.indices.size());
  }
  for (const std::uint32_t u : out.indices) ++out.doc_freq[u];
  return out;
}

// An estimate (SearchOptions::estimate) returns real documents with their exact distances,
// so its k-th is never below the true k-th best.
TEST(RankShards, AnEstimateBoundsTheKthBestFromAbove) {
  const Index index = Index::from_data(test::random_index(150, 90, 6, 9, 41));
  const QuerySet q = test::mixed_queries(index, 6, 9);
  for (SearchOptions o : every_method()) {
    if (!o.method->bounded || o.direction == Direction::document_to_query) continue;
    o.prune = false;
    const std::vector<float> all = test::matrix(CpuSearcher(index), q, o);
    const SearchResults best = search(index, q, 4, o);
    o.prune = true;
    o.estimate = 4;
    SearchStats st, full_st;
    const SearchResults est = search(index, q, 4, o, &st);
    o.estimate = 0;
    search(index, q, 4, o, &full_st);
    EXPECT_LE(st.refined, full_st.refined) << name(o);
    for (std::size_t j = 0; j < q.size(); ++j) {
      for (std::size_t t = 0; t < 4; ++t) {
        const std::int64_t doc = est.indices[j * 4 + t];
        ASSERT_GE(doc, 0) << name(o);
        EXPECT_EQ(est.distances[j * 4 + t], all[j * index.n_docs() + static_cast<std::size_t>(doc)])
            << name(o);
      }
      EXPECT_GE(est.distances[j * 4 + 3], best.distances[j * 4 + 3]) << name(o);
    }
  }
}

// WMD's ranks prune with the k-th best they share, made inclusive: a document on an earlier rank
// at exactly that distance still wins the tie against a later rank's.
TEST(RankShards, SharedKthBestKeepsTiesAcrossRanks) {
  // The first query, "w3 w3 w17 w40 w88", copied into rank 0 (document 4) and rank 2 (45, 50).
  const IndexData data = with_copies(test::random_index(60, 150, 6, 9, 19), {4, 45, 50},
                                     {3, 17, 40, 88}, {2.0f, 1.0f, 1.0f, 1.0f});
  const Split s = split(data, 3);
  const SegmentSet set(s.pointers());
  const std::vector<RawDocument> docs = word_queries();
  const QuerySet q = set.make_query_set(docs, {});
  SearchOptions o;
  o.method = Method("wmd");
  for (const std::size_t k : {1, 2, 3, 5}) {
    const SearchResults want = CollectionSearcher(set, {}).search(q, k, o);
    ASSERT_EQ(want.indices[0], 4);
    if (k >= 2) {  // the tie is there to keep
      EXPECT_EQ(want.indices[1], 45);
      EXPECT_EQ(want.distances[1], want.distances[0]);
    }
    SearchResults got;
    on_ranks(3, [&](int r, Communicator& comm) {
      RankShards shards(comm, s.files[static_cast<std::size_t>(r)], {});
      const QuerySet mine = shards.make_query_set(r == 0 ? docs : std::vector<RawDocument>{}, {});
      const SearchResults res = shards.search(mine, k, o);
      if (r == 0) got = res;
    });
    EXPECT_EQ(got.distances, want.distances) << "k " << k;
    EXPECT_EQ(got.indices, want.indices) << "k " << k;
  }
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd {
namespace {

// The queries spread over ranks, every rank the whole index: one process's bytes for every
// method, search and pairwise, with more ranks than some rounds have blocks.
TEST(RankQueries, TheBytesOfOneProcess) {
  const Index index = Index::from_data(test::random_index(50, 80, 5, 8, 7));
  const QuerySet q = test::mixed_queries(index, 7, 8);
  for (const SearchOptions& o : every_method()) {
    const SearchResults want = search(index, q, 6, o);
    const std::vector<float> matrix = test::matrix(CpuSearcher(index), q, o);
    SearchResults got;
    std::vector<float> rows;
    std::vector<std::size_t> firsts;
    on_ranks(3, [&](int r, Communicator& comm) {
      const RankQueries ranks(comm, index, {});
      const QuerySet mine = r == 0 ? q : QuerySet{};
      const SearchResults res = ranks.search(mine, 6, o);
      ranks.pairwise(mine, o, [&](std::size_t first, std::size_t count, const float* d) {
        firsts.push_back(first);
        rows.insert(rows.end(), d, d + count * index.n_docs());
      });
      if (r == 0) got = res;
    });
    EXPECT_EQ(got.distances, want.distances) << name(o);
    EXPECT_EQ(got.indices, want.indices) << name(o);
    EXPECT_EQ(rows, matrix) << name(o);
    EXPECT_TRUE(std::is_sorted(firsts.begin(), firsts.end())) << name(o);
    EXPECT_GT(firsts.size(), 1u) << name(o);
  }
}

// Ranks given different indexes are refused on every rank, none left waiting.
TEST(RankQueries, DifferentIndexesAreRefusedOnEveryRank) {
  const Index a = Index::from_data(test::random_index(30, 40, 4, 6, 1));
  const Index b = Index::from_data(test::random_index(31, 40, 4, 6, 1));
  std::vector<int> errors(2, 0);
  on_ranks(2, [&](int r, Communicator& comm) {
    try {
      RankQueries ranks(comm, r == 0 ? a : b, {});
    } catch (const Error& e) {
      errors[static_cast<std::size_t>(r)] =
          std::string(e.what()).find("rank 1") != std::string::npos;
    }
  });
  EXPECT_EQ(errors, (std::vector<int>{1, 1}));
}

// One index's documents spread over more ranks than it has: the empty parts answer nothing, the
// others the one process's bytes; the parts share the index's vocabulary, so queries over it
// serve every rank.
TEST(RankShards, MoreRanksThanDocuments) {
  const Index index = Index::from_data(test::random_index(4, 30, 4, 6, 5));
  const QuerySet q = test::mixed_queries(index, 3, 6);
  SearchOptions o;
  o.method = Method("wmd");
  const SearchResults want = search(index, q, 5, o);
  SearchResults got;
  on_ranks(6, [&](int r, Communicator& comm) {
    const std::size_t n = index.n_docs();
    const auto rank = static_cast<std::size_t>(r);
    const Index part = index.shard(n * rank / 6, n * (rank + 1) / 6);
    const RankShards ranks(comm, part, {});
    EXPECT_TRUE(ranks.shares_vocabulary());  // the parts of one index: queries over it
    const SearchResults res = ranks.search(r == 0 ? q : QuerySet{}, 5, o);
    if (r == 0) got = res;
  });
  EXPECT_EQ(got.distances, want.distances);
  EXPECT_EQ(got.indices, want.indices);
}

}  // namespace
}  // namespace lcrwmd
