// Exact WMD against independent answers: the 1-D closed form, brute force over assignments,
// the one-word case, and the unreduced EMD; the bounds below it; pruned top-k against brute
// force on random and real data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/emd.h"
#include "lcrwmd/error.h"
#include "lcrwmd/search.h"
#include "methods/batch_distance.h"
#include "methods/pair_distances.h"
#include "methods/phase1_fixture.h"
#include "ot/dual_bound.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

std::vector<double> random_weights(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::vector<double> w(n);
  for (double& x : w) x = u(rng);
  return w;
}

// On a line with cost |x - y| the EMD is the L1 distance between the two CDFs.
double emd_on_line(const std::vector<double>& xa, std::vector<double> a,
                   const std::vector<double>& xb, std::vector<double> b) {
  const double sa = std::accumulate(a.begin(), a.end(), 0.0);
  const double sb = std::accumulate(b.begin(), b.end(), 0.0);
  std::vector<std::pair<double, double>> events;  // (position, signed mass)
  for (std::size_t i = 0; i < a.size(); ++i) events.push_back({xa[i], a[i] / sa});
  for (std::size_t j = 0; j < b.size(); ++j) events.push_back({xb[j], -b[j] / sb});
  std::sort(events.begin(), events.end());
  double cdf = 0, total = 0;
  for (std::size_t e = 0; e + 1 < events.size(); ++e) {
    cdf += events[e].second;
    total += std::abs(cdf) * (events[e + 1].first - events[e].first);
  }
  return total;
}

TEST(Emd, EqualsTheClosedFormOnALine) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (auto [na, nb] : {std::pair{1, 1}, {1, 7}, {9, 1}, {2, 2}, {5, 13}, {40, 17}, {120, 90}}) {
    std::vector<double> xa(na), xb(nb);
    for (double& x : xa) x = normal(rng);
    for (double& x : xb) x = normal(rng);
    const auto a = random_weights(rng, na), b = random_weights(rng, nb);
    std::vector<double> cost(na * nb);
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j) cost[i * nb + j] = std::abs(xa[i] - xb[j]);
    const double want = emd_on_line(xa, a, xb, b);
    EXPECT_NEAR(emd(a, b, cost), want, 1e-10 * std::max(1.0, want)) << na << "x" << nb;
  }
}

// Problems of 32 x 32 and more are solved on guessed arcs and priced out (emd.cpp): exact on
// degenerate ones too (integer points on a line: many equal costs, ties everywhere), with a
// flow that has the right marginals and the returned cost; the transposed problem agrees.
TEST(Emd, ColumnGenerationIsExactOnLargeAndDegenerateProblems) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> position(0, 20);
  for (auto [na, nb] : {std::pair{32, 32}, {33, 31}, {64, 48}, {200, 150}}) {
    std::vector<double> xa(na), xb(nb);
    for (double& x : xa) x = position(rng);
    for (double& x : xb) x = position(rng);
    auto a = random_weights(rng, na), b = random_weights(rng, nb);
    a[0] = 1e-9;  // a nearly empty bin
    std::vector<double> cost(na * nb), transposed(na * nb);
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j)
        transposed[j * na + i] = cost[i * nb + j] = std::abs(xa[i] - xb[j]);
    const double want = emd_on_line(xa, a, xb, b);
    std::vector<double> flow;
    const double got = emd(a, b, cost, &flow);
    EXPECT_NEAR(got, want, 1e-10 * std::max(1.0, want)) << na << "x" << nb;
    EXPECT_NEAR(emd(b, a, transposed), got, 1e-12 * std::max(1.0, got)) << na << "x" << nb;
    const double sa = std::accumulate(a.begin(), a.end(), 0.0);
    const double sb = std::accumulate(b.begin(), b.end(), 0.0);
    double moved = 0;
    std::vector<double> rows(na, 0.0), cols(nb, 0.0);
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j) {
        ASSERT_GE(flow[i * nb + j], 0.0);
        rows[i] += flow[i * nb + j];
        cols[j] += flow[i * nb + j];
        moved += flow[i * nb + j] * cost[i * nb + j];
      }
    for (int i = 0; i < na; ++i) EXPECT_NEAR(rows[i], a[i] / sa, 1e-12);
    for (int j = 0; j < nb; ++j) EXPECT_NEAR(cols[j], b[j] / sb, 1e-12);
    EXPECT_NEAR(moved, got, 1e-12 * std::max(1.0, got));
  }
  // Spread points (as word vectors): the problem and its transpose.
  std::normal_distribution<double> normal;
  for (auto [na, nb] : {std::pair{100, 70}, {120, 120}}) {
    const std::size_t dim = 20;
    std::vector<double> xa(na * dim), xb(nb * dim);
    for (double& x : xa) x = normal(rng);
    for (double& x : xb) x = normal(rng);
    std::vector<double> cost(na * nb), transposed(na * nb);
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j) {
        double d = 0;
        for (std::size_t k = 0; k < dim; ++k)
          d += (xa[i * dim + k] - xb[j * dim + k]) * (xa[i * dim + k] - xb[j * dim + k]);
        transposed[j * na + i] = cost[i * nb + j] = std::sqrt(d);
      }
    const auto a = random_weights(rng, na), b = random_weights(rng, nb);
    const double got = emd(a, b, cost);
    EXPECT_NEAR(emd(b, a, transposed), got, 1e-12 * got) << na << "x" << nb;
    EXPECT_LE(ot::emd_dual_bound(a, b, cost, ot::kCloseDual), got);
  }
}

TEST(Emd, EqualsTheBestAssignmentForUniformWeights) {
  // Uniform weights on n x n: the transport polytope's vertices are the permutations.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 10.0);
  for (std::size_t n : {2u, 3u, 5u, 6u}) {
    std::vector<double> cost(n * n);
    for (double& c : cost) c = u(rng);
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    double best = 1e300;
    do {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += cost[i * n + perm[i]];
      best = std::min(best, s / static_cast<double>(n));
    } while (std::next_permutation(perm.begin(), perm.end()));
    const std::vector<double> w(n, 1.0);
    EXPECT_NEAR(emd(w, w, cost), best, 1e-11 * best) << n;
  }
}

TEST(Emd, DualBoundLiesBelowAndClose) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (auto [na, nb] : {std::pair{2, 2}, {3, 9}, {30, 30}, {100, 70}}) {
    for (int rep = 0; rep < 5; ++rep) {
      const std::size_t dim = rep % 2 ? 1 : 20;  // the line, and well spread points
      std::vector<double> xa(na * dim), xb(nb * dim);
      for (double& x : xa) x = normal(rng);
      for (double& x : xb) x = normal(rng) + 0.3;
      std::vector<double> cost(na * nb);
      for (int i = 0; i < na; ++i)
        for (int j = 0; j < nb; ++j) {
          double s = 0;
          for (std::size_t d = 0; d < dim; ++d)
            s += (xa[i * dim + d] - xb[j * dim + d]) * (xa[i * dim + d] - xb[j * dim + d]);
          cost[i * nb + j] = std::sqrt(s);
        }
      const auto a = random_weights(rng, na), b = random_weights(rng, nb);
      const double exact = emd(a, b, cost);
      for (const ot::DualEffort effort : {ot::kQuickDual, ot::kCloseDual}) {
        const double bound = ot::emd_dual_bound(a, b, cost, effort);
        EXPECT_LE(bound, exact) << na << "x" << nb << " dim " << dim;
        // Close for spread-out points like word vectors; on a crowded line a dozen Sinkhorn
        // iterations are far from converged (still a bound, just a loose one).
        if (dim > 1) {
          EXPECT_GE(bound, (effort.iterations > 8 ? 0.8 : 0.6) * exact) << na << "x" << nb;
        }
      }
    }
  }
}

TEST(Emd, RejectsBadInput) {
  const std::vector<double> w = {0.5, 0.5}, c = {0, 1, 1, 0};
  EXPECT_THROW(emd({}, w, {}), Error);
  EXPECT_THROW(emd(w, w, std::vector<double>{0, 1, 1}), Error);
  EXPECT_THROW(emd(std::vector<double>{0.5, -0.1}, w, c), Error);
  EXPECT_THROW(emd(std::vector<double>{0.0, 0.0}, w, c), Error);
  EXPECT_THROW(emd(w, w, std::vector<double>{0, NAN, 1, 0}), Error);
  EXPECT_THROW(emd(w, w, std::vector<double>{0, 1, -1, 0}), Error);
}

double euclid(const Index& ix, const QuerySet& qs, std::uint32_t u, std::uint32_t w) {
  const float* a = ix.vector(u);
  const float* b = query_word_vector(ix, qs, w);
  double s = 0;
  for (std::size_t k = 0; k < ix.dim(); ++k) s += (double{a[k]} - b[k]) * (double{a[k]} - b[k]);
  return std::sqrt(s);
}

// WMD of a pair straight from the definition: the full cost matrix, no shared-mass removal.
double reference_wmd(const Index& ix, std::size_t doc, const QuerySet& qs, std::size_t q) {
  const auto ip = ix.indptr();
  std::vector<double> a, b, cost;
  for (std::uint64_t p = ip[doc]; p < ip[doc + 1]; ++p) a.push_back(ix.values()[p]);
  for (std::uint64_t t = qs.indptr[q]; t < qs.indptr[q + 1]; ++t) b.push_back(qs.weights[t]);
  for (std::uint64_t p = ip[doc]; p < ip[doc + 1]; ++p)
    for (std::uint64_t t = qs.indptr[q]; t < qs.indptr[q + 1]; ++t)
      cost.push_back(euclid(ix, qs, ix.indices()[p], qs.words[t]));
  return emd(a, b, cost);
}

TEST(Wmd, EqualsTheUnreducedEmdAndIsSymmetric) {
  const Index ix = Index::from_data(test::random_index(60, 40, 7, 14, 21));
  const QuerySet qs = test::mixed_queries(ix, 8, 5);
  std::vector<std::size_t> all(ix.n_docs());
  std::iota(all.begin(), all.end(), 0);
  const QuerySet docs = query_set_from_index(ix, all);
  for (std::size_t q = 0; q < qs.size(); ++q)
    for (std::size_t i = 0; i < ix.n_docs(); ++i) {
      const double want = reference_wmd(ix, i, qs, q);
      ASSERT_NEAR(wmd_pair(ix, i, qs, q), want, 1e-10 * std::max(1.0, want)) << q << " " << i;
      ASSERT_LE(wmd_dual_bound(ix, i, qs, q, nullptr, ot::kQuickDual), want) << q << " " << i;
      ASSERT_LE(wmd_dual_bound(ix, i, qs, q, nullptr, ot::kCloseDual), want) << q << " " << i;
    }
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t j = 0; j < 20; ++j)
      ASSERT_NEAR(wmd_pair(ix, i, docs, j), wmd_pair(ix, j, docs, i), 1e-10) << i << " " << j;
}

QuerySet one_word_query(std::uint32_t word) {
  QuerySet q;
  q.ids = {"one"};
  q.labels = {""};
  q.words = {word};
  q.weights = {1.0f};
  q.indptr = {0, 1};
  return q;
}

TEST(Wmd, IdenticalAndDuplicateVectorDocumentsAreAtZero) {
  const Index ix = Index::from_data(test::random_index(40, 30, 5, 9, 2));
  std::vector<std::size_t> all(ix.n_docs());
  std::iota(all.begin(), all.end(), 0);
  const QuerySet docs = query_set_from_index(ix, all);
  for (std::size_t i = 0; i < ix.n_docs(); ++i) EXPECT_EQ(wmd_pair(ix, i, docs, i), 0.0);
  // random_index copies word 6's vector from word 5: a one-word document of either word is
  // at 0 from the other.
  const QuerySet one = one_word_query(5);
  IndexData d = test::random_index(1, 30, 5, 1, 2);
  d.indices = {6};
  d.values = {1.0f};
  d.indptr = {0, 1};
  const Index six = Index::from_data(d);
  EXPECT_EQ(wmd_pair(six, 0, one, 0), 0.0);
}

TEST(Wmd, OneWordDocumentMovesEverythingToThatWord) {
  const Index ix = Index::from_data(test::random_index(30, 25, 6, 10, 8));
  const QuerySet one = one_word_query(3);
  const auto ip = ix.indptr();
  for (std::size_t i = 0; i < ix.n_docs(); ++i) {
    double want = 0, total = 0;
    for (std::uint64_t p = ip[i]; p < ip[i + 1]; ++p) total += ix.values()[p];
    for (std::uint64_t p = ip[i]; p < ip[i + 1]; ++p)
      want += ix.values()[p] / total * euclid(ix, one, ix.indices()[p], 3);
    EXPECT_NEAR(wmd_pair(ix, i, one, 0), want, 1e-12 * std::max(1.0, want)) << i;
  }
}

// RWMD <= WMD and WCD <= WMD for every pair (to float rounding of the bounds).
void expect_bounds_below_wmd(const Index& ix, const QuerySet& qs) {
  SearchOptions o;
  o.method = Method("wmd");
  const auto wmd = test::matrix(ix, qs, o);
  for (Method m : {Method("lc-rwmd"), Method("wcd")}) {
    o.method = m;
    const auto bound = test::matrix(ix, qs, o);
    for (std::size_t p = 0; p < wmd.size(); ++p)
      ASSERT_LE(bound[p], wmd[p] * (1 + 1e-5) + 1e-6) << to_string(m) << " pair " << p;
  }
}

// WMD's pricing bound (raise_bounds): every document's bound only rises and stays below its
// WMD (in double), for every query; returns the mean of bound / WMD before and after.
std::pair<double, double> expect_pricing_below_wmd(const Index& ix, const QuerySet& qs) {
  const std::size_t n = ix.n_docs();
  const QueryRange range{qs, 0, qs.size()};
  const test::Phase1Fixture p1(ix);
  const auto wmd = make_wmd(ix, range, p1.phase1, std::size_t{1} << 30);
  std::vector<float> bounds(qs.size() * n);
  wmd->compute(bounds.data());
  double before = 0, after = 0, pairs = 0;
  for (std::size_t q = 0; q < qs.size(); ++q) {
    std::vector<float> row(bounds.begin() + static_cast<std::ptrdiff_t>(q * n),
                           bounds.begin() + static_cast<std::ptrdiff_t>((q + 1) * n));
    wmd->raise_bounds(q, row.data());
    for (std::size_t i = 0; i < n; ++i) {
      const double want = wmd_pair(ix, i, qs, q);
      EXPECT_GE(row[i], bounds[q * n + i]) << "query " << q << " doc " << i;
      EXPECT_LE(row[i], want) << "query " << q << " doc " << i;
      if (want > 0) {
        before += bounds[q * n + i] / want;
        after += row[i] / want;
        ++pairs;
      }
    }
  }
  return {before / pairs, after / pairs};
}

TEST(Wmd, PricingBoundLiesBelowAndLifts) {
  // Duplicate vectors, copies of resident documents, words the index lacks, one-word queries.
  for (unsigned seed : {4u, 5u}) {
    const Index ix = Index::from_data(test::random_index(70, 40, 6, 14, seed));
    const auto [before, after] = expect_pricing_below_wmd(ix, test::mixed_queries(ix, 9, seed));
    EXPECT_GT(after, before) << seed;
  }
}

TEST(Wmd, BoundsLieBelow) {
  const Index ix = Index::from_data(test::random_index(80, 50, 9, 16, 4));
  expect_bounds_below_wmd(ix, test::mixed_queries(ix, 10, 9));
}

TEST(RealCorpus, WmdBoundsAndPrunedTopKOnBbcsport) {
  REQUIRE_SHARED_DATA();
  const test::RealData d = test::bbcsport(0, 4);
  expect_bounds_below_wmd(d.index, d.queries);
  // Measured: 0.78 of the WMD on average before, 0.92 after.
  const auto [before, after] = expect_pricing_below_wmd(d.index, d.queries);
  EXPECT_GT(after, before + 0.08);
  SearchOptions o;
  o.method = Method("wmd");
  for (std::size_t k : {1u, 10u}) {
    o.prune = false;
    const SearchResults brute = search(d.index, d.queries, k, o);
    o.prune = true;
    SearchStats st;
    const SearchResults pruned = search(d.index, d.queries, k, o, &st);
    EXPECT_EQ(pruned.indices, brute.indices) << "k=" << k;
    EXPECT_EQ(pruned.distances, brute.distances) << "k=" << k;
    EXPECT_LT(st.refined, d.queries.size() * d.index.n_docs()) << "k=" << k;
  }
}

TEST(Wmd, PrunedTopKOnOneThreadAndInBatches) {
  const Index ix = Index::from_data(test::random_index(200, 60, 8, 12, 17));
  const QuerySet qs = test::mixed_queries(ix, 10, 2);
  SearchOptions o;
  o.method = Method("wmd");
  o.prune = false;
  const SearchResults brute = search(ix, qs, 7, o);
  o.prune = true;
  for (std::size_t batch : {1u, 4u, 64u}) {
    o.batch = batch;
    CpuOptions cpu;
    cpu.tile_rows = batch == 4 ? 5 : 0;
    cpu.memory_budget = batch == 1 ? 1 : std::size_t{1} << 30;  // 1 byte: D2 without cache
    const SearchResults pruned = CpuSearcher(ix, cpu).search(qs, 7, o);
    EXPECT_EQ(pruned.indices, brute.indices) << batch;
    EXPECT_EQ(pruned.distances, brute.distances) << batch;
  }
}

}  // namespace
}  // namespace lcrwmd
