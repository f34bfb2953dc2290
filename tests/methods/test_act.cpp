// The per-pair ACT-k / ICT reference (act_pair.cpp): ACT-0 is RWMD, each step tightens, ICT
// sits below the exact WMD, and the special cases come out as the definitions say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lcrwmd/search.h"
#include "methods/batch_distance.h"
#include "methods/pair_distances.h"
#include "methods/phase1_fixture.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

// RWMD directly in double: each word's whole mass (weights renormalised to 1, as the WMD's)
// at its nearest counterpart.
ActPair rwmd_f64(const Index& ix, std::size_t doc, const QuerySet& qs, std::size_t q) {
  const std::size_t db = ix.indptr()[doc], dh = ix.indptr()[doc + 1] - db;
  const std::size_t qb = qs.indptr[q], qh = qs.length(q);
  auto cost = [&](std::size_t a, std::size_t t) {
    double s = 0;
    const float* x = ix.vector(ix.indices()[db + a]);
    const float* y = query_word_vector(ix, qs, qs.words[qb + t]);
    for (std::size_t d = 0; d < ix.dim(); ++d) s += (double{x[d]} - y[d]) * (double{x[d]} - y[d]);
    return std::sqrt(s);
  };
  double sp = 0, sq = 0;
  for (std::size_t a = 0; a < dh; ++a) sp += ix.values()[db + a];
  for (std::size_t t = 0; t < qh; ++t) sq += qs.weights[qb + t];
  ActPair r{0, 0};
  for (std::size_t a = 0; a < dh; ++a) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t t = 0; t < qh; ++t) best = std::min(best, cost(a, t));
    r.d1 += ix.values()[db + a] / sp * best;
  }
  for (std::size_t t = 0; t < qh; ++t) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < dh; ++a) best = std::min(best, cost(a, t));
    r.d2 += qs.weights[qb + t] / sq * best;
  }
  return r;
}

TEST(ActPair, ChainFromRwmdToWmd) {
  // Duplicate vectors (ties at cost 0 between distinct words), one-word documents, unequal sizes.
  const Index ix = Index::from_data(test::random_index(60, 50, 5, 12, 21));
  const QuerySet qs = test::mixed_queries(ix, 6, 22);
  std::size_t pairs = 0, act1_tighter = 0, ict_below_wmd = 0;
  for (std::size_t q = 0; q < qs.size(); ++q)
    for (std::size_t doc = 0; doc < ix.n_docs(); ++doc) {
      SCOPED_TRACE("query " + std::to_string(q) + " doc " + std::to_string(doc));
      const ActPair r = rwmd_f64(ix, doc, qs, q), a0 = act_pair(ix, doc, qs, q, 0);
      EXPECT_NEAR(a0.d1, r.d1, 1e-12 * (1 + r.d1));  // ACT-0 is RWMD
      EXPECT_NEAR(a0.d2, r.d2, 1e-12 * (1 + r.d2));
      const double wmd = wmd_pair(ix, doc, qs, q), slack = 1e-9 * (1 + wmd);
      ActPair prev = a0;
      const ActPair a1 = act_pair(ix, doc, qs, q, 1), ict = act_pair(ix, doc, qs, q, kIctSteps);
      ++pairs;
      act1_tighter += std::max(a1.d1, a1.d2) > std::max(r.d1, r.d2) + 1e-9;
      ict_below_wmd += std::max(ict.d1, ict.d2) < wmd - 1e-9;
      for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{5}, kIctSteps}) {
        const ActPair a = act_pair(ix, doc, qs, q, k);
        EXPECT_GE(a.d1, prev.d1 - slack) << "k " << k;
        EXPECT_GE(a.d2, prev.d2 - slack) << "k " << k;
        EXPECT_LE(std::max(a.d1, a.d2), wmd + slack) << "k " << k;
        prev = a;
      }
      // Steps beyond the target side's words change nothing: that is ICT.
      const std::size_t longest =
          std::max<std::size_t>(qs.length(q), ix.indptr()[doc + 1] - ix.indptr()[doc]);
      const ActPair all = act_pair(ix, doc, qs, q, longest);
      EXPECT_DOUBLE_EQ(all.d1, prev.d1);
      EXPECT_DOUBLE_EQ(all.d2, prev.d2);
    }
  // The bounds are not trivially RWMD or WMD: ACT-1 tightens most pairs, ICT stays below.
  EXPECT_GT(act1_tighter, pairs / 2);
  EXPECT_GT(ict_below_wmd, pairs / 2);
}

TEST(ActPair, OneWordQueryAndSelf) {
  const Index ix = Index::from_data(test::random_index(20, 30, 4, 8, 5));
  // Against itself every word has itself at cost 0, capacity its own mass: all zero.
  const std::vector<std::size_t> self = {0, 7, 19};
  const QuerySet same = query_set_from_index(ix, self);
  for (std::size_t q = 0; q < self.size(); ++q)
    for (std::size_t k : {std::size_t{0}, std::size_t{1}, kIctSteps}) {
      const ActPair a = act_pair(ix, self[q], same, q, k);
      EXPECT_NEAR(a.d1, 0.0, 1e-12);
      EXPECT_NEAR(a.d2, 0.0, 1e-12);
    }
  // A one-word query (capacity 1): every step moves all of a word's mass to it, so each ACT-k
  // and ICT equals the WMD in the doc -> query direction.
  const QuerySet qs = test::mixed_queries(ix, 1, 9);  // its first fresh query has one word
  const std::size_t one = qs.size() - 1;
  ASSERT_EQ(qs.length(one), 1u);
  for (std::size_t doc = 0; doc < ix.n_docs(); ++doc)
    for (std::size_t k : {std::size_t{0}, std::size_t{3}, kIctSteps})
      EXPECT_NEAR(act_pair(ix, doc, qs, one, k).d1, wmd_pair(ix, doc, qs, one), 1e-9);
}

// The linear-complexity ACT-k (document -> query) against the per-pair reference, with the
// default tiles and with tiny ones (tiles splitting queries' words and the vocabulary).
TEST(LcAct, EqualsThePerPairReference) {
  const Index ix = Index::from_data(test::random_index(50, 70, 6, 14, 31));
  const QuerySet qs = test::mixed_queries(ix, 7, 32);
  const std::size_t n = ix.n_docs();
  for (std::size_t steps :
       {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{5}, kIctSteps})
    for (std::size_t tiny : {0, 1}) {
      const test::Phase1Fixture p1(ix, Precision::f32, tiny ? 7 : 64, tiny ? 3 : 0);
      std::vector<float> out(qs.size() * n);
      make_lc_act(ix, {qs, 0, qs.size()}, steps, p1.phase1)->compute(out.data());
      for (std::size_t q = 0; q < qs.size(); ++q)
        for (std::size_t doc = 0; doc < n; ++doc) {
          const double want = act_pair(ix, doc, qs, q, steps).d1;
          EXPECT_NEAR(out[q * n + doc], want, 2e-5 * (1 + want))
              << "steps " << steps << " tiny " << tiny << " query " << q << " doc " << doc;
        }
    }
}

// search and pairwise with methods act and ict: both modes, pruned or not, batched or not, with
// symmetric LC-RWMD's word-distance cache and without it (a budget too small for it: D2 from
// the vectors), against the per-pair reference.
TEST(ActSearch, TopKAndMatrixEqualThePerPairReference) {
  const Index ix = Index::from_data(test::random_index(80, 60, 5, 12, 41));
  const QuerySet qs = test::mixed_queries(ix, 5, 42);
  const std::size_t n = ix.n_docs(), k = 6;
  for (std::size_t steps : {std::size_t{1}, std::size_t{3}, kIctSteps})
    for (const Direction direction : kDirections) {
      std::vector<double> want(qs.size() * n);
      for (std::size_t q = 0; q < qs.size(); ++q)
        for (std::size_t doc = 0; doc < n; ++doc) {
          const ActPair a = act_pair(ix, doc, qs, q, steps);
          want[q * n + doc] = test::directed(direction, a.d1, a.d2);
        }
      for (bool cached : {true, false})
        for (bool prune : {true, false})
          for (std::size_t batch : {std::size_t{1}, std::size_t{64}}) {
            SearchOptions o;
            o.method = steps == kIctSteps ? Method("ict") : Method("act");
            o.parameters.set("act_steps", static_cast<double>(steps == kIctSteps ? 1 : steps));
            o.direction = direction;
            o.prune = prune;
            o.batch = batch;
            CpuOptions cpu;
            if (!cached) cpu.memory_budget = 1;
            const std::string what = std::string(to_string(o.method)) + " steps " +
                                     std::to_string(act_steps(o)) + " " + to_string(direction) +
                                     (cached ? " cached" : "") + (prune ? " pruned" : "") +
                                     " batch " + std::to_string(batch);
            const CpuSearcher searcher(ix, cpu);
            const std::vector<float> m = test::matrix(searcher, qs, o);
            for (std::size_t e = 0; e < m.size(); ++e)
              ASSERT_NEAR(m[e], want[e], 2e-5 * (1 + want[e])) << what << " entry " << e;
            SearchStats st;
            const SearchResults r = searcher.search(qs, k, o, &st);
            for (std::size_t q = 0; q < qs.size(); ++q) {
              std::vector<double> row(want.begin() + q * n, want.begin() + (q + 1) * n);
              std::sort(row.begin(), row.end());
              for (std::size_t t = 0; t < k; ++t)  // the k best distances, rank by rank
                EXPECT_NEAR(r.distances[q * k + t], row[t], 2e-5 * (1 + row[t])) << what;
            }
            if (direction != Direction::document_to_query && prune) {
              EXPECT_LT(st.refined, qs.size() * n) << what;
            }
          }
    }
}

// The same on a real corpus and real embeddings: each direction of ACT-k and ICT, one-sided and
// symmetric, equals the per-pair reference, and the chain RWMD <= ACT-1 <= ACT-3 <= ICT holds
// entry by entry.
TEST(RealCorpus, ActAndIctEqualThePerPairReferenceOnBbcsport) {
  REQUIRE_SHARED_DATA();
  const test::RealData d = test::bbcsport(80, 8);
  const Index& ix = d.index;
  const QuerySet& qs = d.queries;
  const std::size_t n = ix.n_docs();
  std::vector<float> prev(qs.size() * n, 0.0f);
  for (std::size_t steps :
       {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{5}, kIctSteps}) {
    std::vector<ActPair> want(qs.size() * n);
#pragma omp parallel for schedule(dynamic)
    for (std::size_t x = 0; x < want.size(); ++x) want[x] = act_pair(ix, x % n, qs, x / n, steps);
    for (const Direction direction : kDirections) {
      SearchOptions o;
      o.method = steps == kIctSteps ? Method("ict") : Method("act");
      o.parameters.set("act_steps", static_cast<double>(steps == kIctSteps ? 1 : steps));
      o.direction = direction;
      const std::vector<float> m = test::matrix(ix, qs, o);
      for (std::size_t x = 0; x < m.size(); ++x) {
        const double w = test::directed(direction, want[x].d1, want[x].d2);
        ASSERT_NEAR(m[x], w, 1e-5 * (1 + w)) << "steps " << steps << " " << to_string(direction);
        if (direction == Direction::symmetric) {
          EXPECT_GE(m[x], prev[x] * (1 - 1e-6f)) << "steps " << steps << " entry " << x;
          prev[x] = m[x];
        }
      }
    }
  }
}

}  // namespace
}  // namespace lcrwmd
