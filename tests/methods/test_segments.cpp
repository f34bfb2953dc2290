// A collection of shards with their own vocabularies searched as one (lcrwmd/segments.h): what
// one index of all the documents gives, every method, search and pairwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

#include "lcrwmd/cpu.h"
#include "lcrwmd/query.h"
#include "methods/segment_fixtures.h"

namespace lcrwmd {
namespace {

using test::every_method;
using test::name;
using test::split;
using test::Split;

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

// Chosen documents, in any order, as an index of their own: the distances between them are the
// whole's (within the rounding of sums over another vocabulary), every method.
TEST(SelectDocuments, TheChosenDocumentsAndTheirDistances) {
  const IndexData data = test::random_index(60, 120, 6, 9, 5);
  const Index whole = Index::from_data(data);
  const std::vector<std::size_t> docs{41, 3, 17, 58, 0, 22, 9};
  const IndexData picked = select_documents(data, docs);
  ASSERT_EQ(picked.ids.size(), docs.size());
  EXPECT_EQ(picked.idf_docs, data.ids.size());
  EXPECT_LT(picked.vocab.size(), data.vocab.size());
  for (std::size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(picked.ids[i], data.ids[docs[i]]);
  const Index part = Index::from_data(picked);
  const std::vector<std::size_t> rows{0, 2, 5};
  const QuerySet mine = query_set_from_index(part, rows);
  const std::vector<std::size_t> same{docs[0], docs[2], docs[5]};
  const QuerySet theirs = query_set_from_index(whole, same);
  for (const SearchOptions& o : every_method()) {
    const std::vector<float> got = test::matrix(part, mine, o);
    const std::vector<float> want = test::matrix(whole, theirs, o);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t j = 0; j < docs.size(); ++j)
        ASSERT_TRUE(close(got[r * docs.size() + j], want[r * whole.n_docs() + docs[j]]))
            << name(o) << " row " << r << " document " << j;
  }
  const std::vector<std::size_t> beyond{3, 60};
  EXPECT_THROW(select_documents(data, beyond), Error);
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
  const SegmentSet set({&ix});
  const CollectionSearcher sharded(set, {});
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
    const SegmentSet set(s.pointers());
    EXPECT_EQ(set.n_docs(), whole.n_docs());
    const QuerySet q = translate_queries(whole, qs, set.segment(0));
    for (const SearchOptions& o : every_method()) {
      const std::string what = name(o) + ", " + std::to_string(parts) + " shards";
      const std::vector<float> want = test::matrix(whole, qs, o);
      const std::vector<float> got = test::matrix(CollectionSearcher(set, {}), q, o);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(close(got[i], want[i]))
            << what << " entry " << i << ": " << got[i] << " vs " << want[i];
      const std::size_t k = 6;
      const SearchResults a = CollectionSearcher(set, {}).search(q, k, o),
                          b = search(whole, qs, k, o);
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
  const SegmentSet set({&files[0], &files[1], &files[2]});
  for (const SearchOptions& o : every_method()) {
    const CollectionSearcher sharded(set, {});
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
  const SegmentSet set(s.pointers());
  const QuerySet q = test::mixed_queries(set.segment(0), 8, 9);
  for (SearchOptions o : every_method()) {
    if (!o.method->bounded || o.direction == Direction::document_to_query) continue;
    const CollectionSearcher sharded(set, {});
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
      search(set.segment(sh), set.for_segment(q, sh), 4, o, &st);
      alone += st.refined;
    }
    EXPECT_LE(pruned_stats.refined, alone) << name(o);
    // A ceiling no distance stays under leaves nothing to refine.
    const std::vector<float> zero(q.size(), 0.0f);
    o.ceilings = zero;
    SearchStats none;
    const SearchResults empty = search(set.segment(0), q, 4, o, &none);
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
  const SegmentSet set(s.pointers());
  std::vector<RawDocument> docs;
  for (const char* text : {"w3 w3 w17 w40", "w1 w69 w69 w69 w2", "w55"})
    docs.push_back({"q", "", text, 1});
  const QuerySet a = set.make_query_set(docs, {}), b = make_query_set(whole, docs, {});
  const QuerySet b_over_set = translate_queries(whole, b, set.segment(0));
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
  EXPECT_THROW(SegmentSet({&a, &b}), Error);
  IndexData wider = test::random_index(30, 40, 5, 6, 2);
  const Index c = Index::from_data(wider);
  EXPECT_THROW(SegmentSet({&a, &c}), Error);
  IndexData stop = data;
  stop.stopwords = {"the"};
  const Index d = Index::from_data(stop);
  EXPECT_THROW(SegmentSet({&a, &d}), Error);
  // TF-IDF indexes built apart weigh words by their own documents.
  IndexData t1 = data, t2 = test::random_index(20, 40, 4, 6, 2);
  t1.weighting = t2.weighting = Weighting::tfidf;
  const Index e = Index::from_data(t1), f = Index::from_data(t2);
  EXPECT_THROW(SegmentSet({&e, &f}), Error);
  EXPECT_THROW(SegmentSet({}), Error);
  // The same TF index twice is a collection of twice the documents.
  const SegmentSet twice({&a, &a});
  EXPECT_EQ(twice.n_docs(), 2 * a.n_docs());
  EXPECT_EQ(twice.doc_id(a.n_docs() + 3), a.doc_id(3));
  EXPECT_EQ(twice.find_doc(a.doc_id(3)), 3u);
  EXPECT_THROW(twice.locate(2 * a.n_docs()), Error);
}

// Queries written over another index (word ids beyond the vocabulary and the extra words) are
// an Error, never a read out of bounds.
TEST(Sharded, QueriesOfAnotherIndexAreAnError) {
  const IndexData data = test::random_index(60, 90, 5, 8, 4);
  const Index whole = Index::from_data(data);
  const Split s = split(data, 3);
  const SegmentSet set(s.pointers());
  const QuerySet over_whole = test::mixed_queries(whole, 3, 5);
  EXPECT_THROW(CollectionSearcher(set, {}).search(over_whole, 3, {}), Error);
  QuerySet bad = test::mixed_queries(whole, 2, 6);
  bad.words.back() = static_cast<std::uint32_t>(whole.vocab_size() + bad.extra_words.size());
  EXPECT_THROW(CpuSearcher(whole).search(bad, 3, {}), Error);
  EXPECT_THROW(test::matrix(whole, bad, {}), Error);
}

}  // namespace
}  // namespace lcrwmd
