// The bytes ranks exchange: query sets and results round-trip, damaged messages are errors.
#include <gtest/gtest.h>

#include <string>

#include "lcrwmd/error.h"
#include "lcrwmd/wire.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

TEST(Wire, QuerySetsRoundTrip) {
  const Index ix = Index::from_data(test::random_index(20, 30, 5, 6, 3));
  const QuerySet q = test::mixed_queries(ix, 4, 9);  // with extra words and vectors
  ASSERT_FALSE(q.extra_words.empty());
  const QuerySet back = unpack_queries(pack(q));
  EXPECT_EQ(back.ids, q.ids);
  EXPECT_EQ(back.labels, q.labels);
  EXPECT_EQ(back.indptr, q.indptr);
  EXPECT_EQ(back.words, q.words);
  EXPECT_EQ(back.weights, q.weights);
  EXPECT_EQ(back.extra_words, q.extra_words);
  EXPECT_EQ(back.extra_vectors, q.extra_vectors);
  const QuerySet empty = unpack_queries(pack(QuerySet{}));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.indptr, QuerySet{}.indptr);
}

TEST(Wire, ResultsAndStatsRoundTrip) {
  SearchResults r;
  r.n_queries = 2;
  r.k = 3;
  r.distances = {0.0f, 1.5f, 2.25f, 0.5f, 0.75f, -0.0f};
  r.indices = {4, 1, 7, 0, 9, -1};
  SearchStats st;
  st.batches = 3;
  st.distances = 1234567890123;
  st.refined = 11;
  st.tightened = 5;
  st.device_chunks = 2;
  st.backend = Backend::cuda;
  SearchResults back;
  SearchStats st_back;
  unpack_results(pack(r, st), back, st_back);
  EXPECT_EQ(back.n_queries, r.n_queries);
  EXPECT_EQ(back.k, r.k);
  EXPECT_EQ(back.distances, r.distances);
  EXPECT_EQ(back.indices, r.indices);
  EXPECT_EQ(st_back.batches, st.batches);
  EXPECT_EQ(st_back.distances, st.distances);
  EXPECT_EQ(st_back.refined, st.refined);
  EXPECT_EQ(st_back.tightened, st.tightened);
  EXPECT_EQ(st_back.device_chunks, st.device_chunks);
  EXPECT_EQ(st_back.backend, st.backend);
}

TEST(Wire, DamagedMessagesAreErrors) {
  const Index ix = Index::from_data(test::random_index(20, 30, 5, 6, 3));
  const std::string bytes = pack(test::mixed_queries(ix, 4, 9));
  // Every truncation, and a count far beyond the message (no huge allocation).
  for (std::size_t n = 0; n < bytes.size(); n += 7)
    EXPECT_THROW(unpack_queries(bytes.substr(0, n)), Error) << n;
  std::string huge = bytes;
  huge[0] = huge[1] = huge[2] = huge[3] = huge[4] = huge[5] = '\xff';
  EXPECT_THROW(unpack_queries(huge), Error);
  SearchResults r;
  SearchStats st;
  EXPECT_THROW(unpack_results(std::string(5, '\0'), r, st), Error);
}

}  // namespace
}  // namespace lcrwmd
