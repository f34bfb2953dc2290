// The evaluators against hand-computed cases: kNN votes with ties, error rates, overlap with
// a reference ranking, precision grouped by label size.
#include <gtest/gtest.h>

#include <cmath>

#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

TEST(Eval, KnnVoteFallsBackOnTies) {
  const std::vector<std::string_view> l = {"a", "b", "b", "a", "c", "a"};
  EXPECT_EQ(knn_vote(l, 1), "a");
  EXPECT_EQ(knn_vote(l, 2), "a");  // a:1 b:1 tie -> k=1
  EXPECT_EQ(knn_vote(l, 3), "b");
  EXPECT_EQ(knn_vote(l, 4), "b");  // a:2 b:2 tie -> k=3 -> b
  EXPECT_EQ(knn_vote(l, 5), "b");  // a:2 b:2 c:1 -> k=4 -> k=3 -> b
  EXPECT_EQ(knn_vote(l, 6), "a");
  EXPECT_EQ(knn_vote(l, 60), "a");  // fewer neighbours than k: all of them
}

// Six labelled documents and three labelled queries with hand-picked neighbour lists.
struct Toy {
  Index index;
  QuerySet queries;
  SearchResults results;
};

Toy toy() {
  IndexData d = test::random_index(6, 10, 3, 3, 1);
  d.labels = {"x", "x", "y", "y", "y", "z"};
  Toy t{Index::from_data(d), {}, {}};
  t.queries = query_set_from_index(t.index, std::vector<std::size_t>{0, 2, 5});
  t.queries.labels = {"x", "y", "z"};
  t.results.n_queries = 3;
  t.results.k = 3;
  t.results.indices = {0, 2, 3,   // query x: x y y
                       2, 0, 1,   // query y: y x x
                       3, 5, 0};  // query z: y z x
  t.results.distances.assign(9, 0.0f);
  return t;
}

TEST(Eval, KnnErrorEqualsTheHandCount) {
  const Toy t = toy();
  const std::vector<std::size_t> ks = {1, 2, 3};
  const KnnReport r = knn_error(t.results, t.index, t.queries, ks);
  // k=1: x ok, y ok, z wrong (y). k=2: ties fall back to k=1: same. k=3: x->y wrong,
  // y->x wrong, z: y,z,x all tied -> k=2 tied -> k=1 y wrong.
  EXPECT_DOUBLE_EQ(r.errors[0], 1.0 / 3);
  EXPECT_DOUBLE_EQ(r.errors[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(r.errors[2], 1.0);
  EXPECT_EQ(r.best_k, 1u);
  EXPECT_DOUBLE_EQ(r.best_error, 1.0 / 3);
}

TEST(Eval, PrecisionGroupsLabelsBySize) {
  const Toy t = toy();
  const std::vector<std::size_t> ks = {1, 3};
  const PrecisionReport p = precision_at_k(t.results, t.index, t.queries, ks);
  // Label sizes: x 2, y 3 (group 2-3), z 1 (group 1-1).
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].min_size, 1u);
  EXPECT_EQ(p.groups[0].labels, 1u);
  EXPECT_EQ(p.groups[1].min_size, 2u);
  EXPECT_EQ(p.groups[1].max_size, 3u);
  EXPECT_EQ(p.groups[1].labels, 2u);
  // P@1: x 1, y 1, z 0 -> groups {z: 0}, {x, y: 1}; P@3: x 1/3, y 1/3, z 1/3.
  EXPECT_DOUBLE_EQ(p.groups[1].precision[0], 1.0);
  EXPECT_DOUBLE_EQ(p.groups[0].precision[0], 0.0);
  EXPECT_DOUBLE_EQ(p.precision[0], 0.0);
  EXPECT_NEAR(p.precision[1], 1.0 / 3, 1e-12);
}

TEST(Eval, OverlapCountsTheMethodsTopKInsideTheReferencesTopPercent) {
  SearchResults method, reference;
  method.n_queries = reference.n_queries = 1;
  method.k = 4;
  method.indices = {7, 1, 9, 3};
  reference.k = 5;
  reference.indices = {1, 7, 3, 2, 9};
  method.distances.assign(4, 0.0f);
  reference.distances.assign(5, 0.0f);
  const std::vector<std::size_t> ks = {1, 2, 4};
  const std::vector<double> percents = {10, 20, 50};  // of 10 documents: top 1, 2, 5
  const OverlapReport r = top_k_overlap(method, reference, 10, ks, percents);
  const std::vector<double> want = {0,    1,   1,  //
                                    0.5,  1,   1,  //
                                    0.25, 0.5, 1};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(r.shares[i], want[i]) << i;
  const std::vector<double> too_far = {60};
  EXPECT_THROW(top_k_overlap(method, reference, 10, ks, too_far), Error);
}

TEST(Eval, RejectsUnlabelledAndEmptyInput) {
  Toy t = toy();
  const std::vector<std::size_t> ks = {1};
  t.queries.labels[1].clear();
  EXPECT_THROW(knn_error(t.results, t.index, t.queries, ks), Error);
  EXPECT_THROW(knn_error(SearchResults{}, t.index, QuerySet{}, ks), Error);
}

}  // namespace
}  // namespace lcrwmd
