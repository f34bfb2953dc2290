// A collection of shards with their own vocabularies searched as one (lcrwmd/sharded.h): what
// one index of all the documents gives, every method, search and pairwise.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstddef>
#include <thread>

#include "io/index_format.h"
#include "lcrwmd/communicator.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/sharded.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

std::vector<SearchOptions> every_method() {
  std::vector<SearchOptions> out;
  for (const MethodInfo& m : methods())
    for (bool symmetric : {true, false}) {
      if (!symmetric && !m.one_sided) continue;
      SearchOptions o;
      o.method = m.method;
      o.symmetric = symmetric;
      o.act_steps = 2;
      out.push_back(o);
    }
  return out;
}

std::string name(const SearchOptions& o) {
  return std::string(to_string(o.method)) + (o.symmetric ? "" : " one-sided");
}

// The shards of `whole` (split_index_data), as indexes.
struct Split {
  std::vector<Index> files;
  std::vector<const Index*> pointers() const {
    std::vector<const Index*> p;
    for (const Index& f : files) p.push_back(&f);
    return p;
  }
};
Split split(const IndexData& whole, std::size_t parts) {
  Split s;
  for (const IndexData& d : split_index_data(whole, parts)) s.files.push_back(Index::from_data(d));
  return s;
}

bool close(float a, float b) { return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b)); }

TEST(SplitIndexData, EachShardItsDocumentsAndTheWordsTheyUse) {
  const IndexData whole = test::random_index(53, 200, 6, 9, 3);
  const auto parts = split_index_data(whole, 4);
  ASSERT_EQ(parts.size(), 4u);
  std::size_t doc = 0;
  for (const IndexData& p : parts) {
    EXPECT_EQ(p.idf_docs, whole.ids.size());
    EXPECT_LT(p.vocab.size(), whole.vocab.size()) << "a shard keeps only the words it uses";
    std::vector<bool> used(p.vocab.size(), false);
    for (std::size_t i = 0; i + 1 < p.indptr.size(); ++i, ++doc) {
      EXPECT_EQ(p.ids[i], whole.ids[doc]);
      ASSERT_EQ(p.indptr[i + 1] - p.indptr[i], whole.indptr[doc + 1] - whole.indptr[doc]);
      for (std::uint64_t q = p.indptr[i], w = whole.indptr[doc]; q < p.indptr[i + 1]; ++q, ++w) {
        const std::uint32_t u = p.indices[q];
        used[u] = true;
        EXPECT_EQ(p.vocab[u], whole.vocab[whole.indices[w]]);
        EXPECT_EQ(p.values[q], whole.values[w]);
        EXPECT_EQ(p.doc_freq[u], whole.doc_freq[whole.indices[w]]) << "the whole's frequencies";
        EXPECT_EQ(p.vectors[u * p.dim], whole.vectors[whole.indices[w] * whole.dim]);
      }
    }
    EXPECT_EQ(std::count(used.begin(), used.end(), false), 0);
  }
  EXPECT_EQ(doc, whole.ids.size());
  EXPECT_THROW(split_index_data(whole, 54), Error);
  EXPECT_THROW(split_index_data(whole, 0), Error);
}

// A shard records the whole build's document count; a file whose count was altered fails its
// checksum, and an index of its own documents keeps the bytes it had before the count existed.
TEST(SplitIndexData, TheWholeBuildsCountIsKeptAndChecked) {
  const IndexData data = test::random_index(20, 30, 4, 5, 1);
  const auto parts = split_index_data(data, 2);
  std::string bytes = Index::from_data(parts[1]).to_bytes();
  EXPECT_EQ(Index::from_bytes(bytes).idf_docs(), 20u);
  EXPECT_EQ(Index::from_bytes(bytes).n_docs(), 10u);
  bytes[offsetof(format::FileHeader, idf_docs)] ^= 1;
  EXPECT_THROW(Index::from_bytes(bytes), Error);
  const Index whole = Index::from_data(data);
  EXPECT_EQ(whole.idf_docs(), 20u);
  const std::string plain = whole.to_bytes();
  for (std::size_t b = 0; b < 8; ++b)
    EXPECT_EQ(plain[offsetof(format::FileHeader, idf_docs) + b], 0) << "byte " << b;
}

// One shard: the searcher of the index itself, byte for byte.
TEST(Sharded, OneShardIsTheIndex) {
  const Index ix = Index::from_data(test::random_index(40, 60, 5, 8, 4));
  const QuerySet qs = test::mixed_queries(ix, 6, 2);
  const ShardSet set({&ix});
  const ShardedSearcher sharded(set, {});
  for (const SearchOptions& o : every_method()) {
    EXPECT_EQ(test::matrix(sharded, qs, o), test::matrix(ix, qs, o)) << name(o);
    const SearchResults a = sharded.search(qs, 5, o), b = search(ix, qs, 5, o);
    EXPECT_EQ(a.distances, b.distances) << name(o);
    EXPECT_EQ(a.indices, b.indices) << name(o);
  }
}

// Shards with their own vocabularies against the whole index: the same distances (within the
// rounding of sums taken in another word order) and the same neighbours apart from near-ties.
TEST(Sharded, OwnVocabulariesGiveTheWholeIndexsResults) {
  const IndexData data = test::random_index(97, 150, 7, 10, 8);
  const Index whole = Index::from_data(data);
  const QuerySet qs = test::mixed_queries(whole, 7, 5);
  for (std::size_t parts : {2u, 3u, 5u}) {
    const Split s = split(data, parts);
    const ShardSet set(s.pointers());
    EXPECT_EQ(set.n_docs(), whole.n_docs());
    const QuerySet q = translate_queries(whole, qs, set.shard(0));
    for (const SearchOptions& o : every_method()) {
      const std::string what = name(o) + ", " + std::to_string(parts) + " shards";
      const std::vector<float> want = test::matrix(whole, qs, o);
      const std::vector<float> got = test::matrix(ShardedSearcher(set, {}), q, o);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(close(got[i], want[i]))
            << what << " entry " << i << ": " << got[i] << " vs " << want[i];
      const std::size_t k = 6;
      const SearchResults a = ShardedSearcher(set, {}).search(q, k, o), b = search(whole, qs, k, o);
      ASSERT_EQ(a.k, b.k);
      for (std::size_t e = 0; e < a.distances.size(); ++e) {
        ASSERT_TRUE(close(a.distances[e], b.distances[e])) << what;
        // Each neighbour at its own distance, in the collection's numbering.
        ASSERT_TRUE(close(want[(e / k) * whole.n_docs() + static_cast<std::size_t>(a.indices[e])],
                          a.distances[e]))
            << what;
      }
    }
  }
}

// Shards holding the whole vocabulary (Index::shard's, as each MPI rank maps): the very bytes.
TEST(Sharded, SharedVocabulariesGiveTheSameBytes) {
  const Index whole = Index::from_data(test::random_index(61, 80, 5, 9, 12));
  const QuerySet qs = test::mixed_queries(whole, 5, 3);
  std::vector<Index> files;
  for (auto [b, e] : {std::pair{0, 20}, std::pair{20, 21}, std::pair{21, 61}})
    files.push_back(Index::from_bytes(whole.shard(b, e).to_bytes()));
  const ShardSet set({&files[0], &files[1], &files[2]});
  for (const SearchOptions& o : every_method()) {
    const ShardedSearcher sharded(set, {});
    EXPECT_EQ(test::matrix(sharded, qs, o), test::matrix(whole, qs, o)) << name(o);
    for (std::size_t k : {1u, 7u, 100u}) {
      const SearchResults a = sharded.search(qs, k, o), b = search(whole, qs, k, o);
      EXPECT_EQ(a.distances, b.distances) << name(o) << " k " << k;
      EXPECT_EQ(a.indices, b.indices) << name(o) << " k " << k;
    }
  }
}

// The k-th best of earlier shards prunes later ones: the same bytes as pruning each alone and
// as no pruning.
TEST(Sharded, CeilingsFromEarlierShardsChangeNothing) {
  const IndexData data = test::random_index(120, 90, 6, 9, 21);
  const Split s = split(data, 4);
  const ShardSet set(s.pointers());
  const QuerySet q = test::mixed_queries(set.shard(0), 8, 9);
  for (SearchOptions o : every_method()) {
    if (!describe(o.method).bounded || !o.symmetric) continue;
    const ShardedSearcher sharded(set, {});
    SearchStats pruned_stats;
    const SearchResults pruned = sharded.search(q, 4, o, &pruned_stats);
    o.prune = false;
    SearchStats all_stats;
    const SearchResults all = sharded.search(q, 4, o, &all_stats);
    EXPECT_EQ(pruned.distances, all.distances) << name(o);
    EXPECT_EQ(pruned.indices, all.indices) << name(o);
    EXPECT_LT(pruned_stats.refined, all_stats.refined) << name(o);
    // Each shard alone refines at least what it does under the earlier shards' k-th best.
    o.prune = true;
    std::size_t alone = 0;
    for (std::size_t sh = 0; sh < set.size(); ++sh) {
      SearchStats st;
      search(set.shard(sh), set.for_shard(q, sh), 4, o, &st);
      alone += st.refined;
    }
    EXPECT_LE(pruned_stats.refined, alone) << name(o);
    // A ceiling no distance stays under leaves nothing to refine.
    const std::vector<float> zero(q.size(), 0.0f);
    o.ceilings = zero;
    SearchStats none;
    const SearchResults empty = search(set.shard(0), q, 4, o, &none);
    EXPECT_EQ(none.refined, 0u) << name(o);
    EXPECT_EQ(std::count(empty.indices.begin(), empty.indices.end(), -1),
              static_cast<std::ptrdiff_t>(empty.indices.size()))
        << name(o);
  }
}

TEST(Sharded, TfIdfShardsWeighQueriesAsTheWholeBuild) {
  IndexData data = test::random_index(80, 70, 4, 8, 30);
  data.weighting = Weighting::tfidf;
  const Index whole = Index::from_data(data);
  const Split s = split(data, 3);
  const ShardSet set(s.pointers());
  std::vector<RawDocument> docs;
  for (const char* text : {"w3 w3 w17 w40", "w1 w69 w69 w69 w2", "w55"})
    docs.push_back({"q", "", text, 1});
  const QuerySet a = set.make_query_set(docs, {}), b = make_query_set(whole, docs, {});
  const QuerySet b_over_set = translate_queries(whole, b, set.shard(0));
  ASSERT_EQ(a.words, b_over_set.words);
  for (std::size_t p = 0; p < a.weights.size(); ++p)
    EXPECT_NEAR(a.weights[p], b_over_set.weights[p], 1e-7);
}

TEST(Sharded, ShardsThatDisagreeAreRefused) {
  const IndexData data = test::random_index(30, 40, 4, 6, 2);
  const Index a = Index::from_data(data);
  IndexData other = data;
  other.vectors[0] += 1.0f;  // word 0 with another vector
  const Index b = Index::from_data(other);
  EXPECT_THROW(ShardSet({&a, &b}), Error);
  IndexData wider = test::random_index(30, 40, 5, 6, 2);
  const Index c = Index::from_data(wider);
  EXPECT_THROW(ShardSet({&a, &c}), Error);
  IndexData stop = data;
  stop.stopwords = {"the"};
  const Index d = Index::from_data(stop);
  EXPECT_THROW(ShardSet({&a, &d}), Error);
  // TF-IDF indexes built apart weigh words by their own documents.
  IndexData t1 = data, t2 = test::random_index(20, 40, 4, 6, 2);
  t1.weighting = t2.weighting = Weighting::tfidf;
  const Index e = Index::from_data(t1), f = Index::from_data(t2);
  EXPECT_THROW(ShardSet({&e, &f}), Error);
  EXPECT_THROW(ShardSet({}), Error);
  // The same TF index twice is a collection of twice the documents.
  const ShardSet twice({&a, &a});
  EXPECT_EQ(twice.n_docs(), 2 * a.n_docs());
  EXPECT_EQ(twice.doc_id(a.n_docs() + 3), a.doc_id(3));
  EXPECT_EQ(twice.find_doc(a.doc_id(3)), 3u);
  EXPECT_THROW(twice.locate(2 * a.n_docs()), Error);
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd {
namespace {

// Ranks as threads: every broadcast and gather meets all of them at a barrier.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : slots_(static_cast<std::size_t>(n)), barrier_(n) {}

  class Rank final : public Communicator {
   public:
    Rank(ThreadRanks& all, int rank) : all_(all), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(all_.slots_.size()); }
    void broadcast(std::string& bytes) override {
      if (rank_ == 0) all_.root_ = bytes;
      all_.barrier_.arrive_and_wait();
      if (rank_ != 0) bytes = all_.root_;
      all_.barrier_.arrive_and_wait();
    }
    std::vector<std::string> gather(const std::string& bytes) override {
      all_.slots_[static_cast<std::size_t>(rank_)] = bytes;
      all_.barrier_.arrive_and_wait();
      std::vector<std::string> out;
      if (rank_ == 0) out = all_.slots_;
      all_.barrier_.arrive_and_wait();
      return out;
    }

   private:
    ThreadRanks& all_;
    int rank_;
  };

 private:
  std::vector<std::string> slots_;
  std::string root_;
  std::barrier<> barrier_;
};

std::vector<RawDocument> word_queries() {
  std::vector<RawDocument> docs;
  for (const char* text : {"w3 w3 w17 w40 w88", "w1 w69 w69 w69 w2 w120", "w55", "w140 w7 w7"})
    docs.push_back({"q" + std::to_string(docs.size()), "", text, docs.size() + 1});
  return docs;
}

// A shard per rank (threads standing in for mpirun's ranks) gives the bytes of the same shards
// searched in one process, for every method, TF and TF-IDF.
TEST(RankShards, TheSameBytesAsTheShardsInOneProcess) {
  for (const Weighting weighting : {Weighting::tf, Weighting::tfidf}) {
    IndexData data = test::random_index(90, 150, 6, 9, 17);
    data.weighting = weighting;
    const Split s = split(data, 3);
    const ShardSet set(s.pointers());
    const std::vector<RawDocument> docs = word_queries();
    const QuerySet q = set.make_query_set(docs, {});
    ASSERT_EQ(q.size(), docs.size());
    for (const SearchOptions& o : every_method()) {
      const SearchResults want = ShardedSearcher(set, {}).search(q, 5, o);
      ThreadRanks all(3);
      SearchResults got;
      std::vector<std::string> ids;
      std::vector<std::thread> ranks;
      for (int r = 0; r < 3; ++r)
        ranks.emplace_back([&, r] {
          ThreadRanks::Rank comm(all, r);
          RankShards shards(comm, s.files[static_cast<std::size_t>(r)], {});
          EXPECT_EQ(shards.n_docs(), set.n_docs());
          const QuerySet mine =
              shards.make_query_set(r == 0 ? docs : std::vector<RawDocument>{}, {});
          const SearchResults res = shards.search(mine, 5, o);
          const std::vector<std::string> names = shards.doc_ids(res.indices);
          if (r == 0) got = res, ids = names;
        });
      for (std::thread& t : ranks) t.join();
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
  const ShardSet set(s.pointers());
  const std::vector<RawDocument> docs = word_queries();
  const QuerySet q = set.make_query_set(docs, {});
  for (const SearchOptions& o : every_method()) {
    const std::vector<float> want = test::matrix(ShardedSearcher(set, {}), q, o);
    ThreadRanks all(3);
    std::vector<float> got;
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.emplace_back([&, r] {
        ThreadRanks::Rank comm(all, r);
        RankShards shards(comm, s.files[static_cast<std::size_t>(r)], {});
        const QuerySet mine = shards.make_query_set(r == 0 ? docs : std::vector<RawDocument>{}, {});
        const std::size_t n = shards.n_docs();
        shards.pairwise(mine, o, [&](std::size_t first, std::size_t rows, const float* d) {
          got.resize(std::max(got.size(), (first + rows) * n));
          std::copy(d, d + rows * n, got.begin() + static_cast<std::ptrdiff_t>(first * n));
        });
      });
    for (std::thread& t : ranks) t.join();
    EXPECT_EQ(got, want) << name(o);
  }
}

// A failure on one rank is an Error on every rank, none left waiting.
TEST(RankShards, AFailureOnOneRankIsAnErrorOnAll) {
  const Split s = split(test::random_index(40, 60, 4, 6, 3), 2);
  IndexData other = test::random_index(20, 30, 5, 6, 3);  // another dimension
  const Index odd = Index::from_data(other);
  ThreadRanks all(2);
  std::vector<int> errors(2, 0);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      ThreadRanks::Rank comm(all, r);
      try {
        RankShards shards(comm, r == 0 ? s.files[0] : odd, {});
      } catch (const Error&) {
        errors[static_cast<std::size_t>(r)] = 1;
      }
    });
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(errors, (std::vector<int>{1, 1}));
}

}  // namespace
}  // namespace lcrwmd
