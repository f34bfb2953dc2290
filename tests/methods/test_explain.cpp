// explain(): the flows behind a distance add up to it, move each side's weights, and agree
// with what search reports; a document against itself moves every word onto itself for free.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "lcrwmd/error.h"
#include "lcrwmd/explain.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

struct Sides {
  std::map<std::string, double> query, doc;  // mass per word, summed over the flows
  double total = 0;                          // sum of mass * cost
};

Sides sum_flows(const std::vector<WordFlow>& flows) {
  Sides s;
  for (const WordFlow& f : flows) {
    EXPECT_GE(f.mass, 0.0);
    EXPECT_GE(f.cost, 0.0);
    s.query[f.query_word] += f.mass;
    s.doc[f.doc_word] += f.mass;
    s.total += f.mass * f.cost;
  }
  return s;
}

std::string query_word(const Index& ix, const QuerySet& qs, std::uint32_t u) {
  return u < ix.vocab_size() ? std::string(ix.word(u)) : qs.extra_words[u - ix.vocab_size()];
}

class Explain : public ::testing::Test {
 protected:
  Explain() : ix(Index::from_data(test::random_index(40, 60, 6, 9, 11))) {
    qs = test::mixed_queries(ix, 4, 12);
  }
  // Word -> weight of query q and of document doc.
  std::map<std::string, double> query_weights(std::size_t q) const {
    std::map<std::string, double> w;
    for (std::uint64_t p = qs.indptr[q]; p < qs.indptr[q + 1]; ++p)
      w[query_word(ix, qs, qs.words[p])] += qs.weights[p];
    return w;
  }
  std::map<std::string, double> doc_weights(std::size_t doc) const {
    std::map<std::string, double> w;
    for (std::uint64_t p = ix.indptr()[doc]; p < ix.indptr()[doc + 1]; ++p)
      w[std::string(ix.word(ix.indices()[p]))] += ix.values()[p];
    return w;
  }
  static void expect_masses(const std::map<std::string, double>& got,
                            std::map<std::string, double> want, double tol) {
    double total = 0;
    for (const auto& [w, x] : want) total += x;
    for (auto& [w, x] : want) x /= total;  // flows are in units of total weight 1
    for (const auto& [w, x] : want) {
      const auto it = got.find(w);
      EXPECT_NEAR(it == got.end() ? 0.0 : it->second, x, tol) << w;
    }
    for (const auto& [w, x] : got)
      EXPECT_TRUE(want.count(w)) << "flow from a word not there: " << w;
  }
  Index ix;
  QuerySet qs;
};

TEST_F(Explain, WmdFlowMovesBothSidesAndCostsTheReportedDistance) {
  SearchOptions o;
  o.method = Method("wmd");
  const std::vector<float> d = test::matrix(ix, qs, o);
  for (std::size_t q = 0; q < qs.size(); ++q)
    for (std::size_t doc : {std::size_t{0}, std::size_t{7}, ix.n_docs() - 1}) {
      const Explanation e = explain(ix, qs, q, doc, Method("wmd"));
      EXPECT_EQ(e.distance, d[q * ix.n_docs() + doc]) << q << " " << doc;  // what search says
      const Sides s = sum_flows(e.flows);
      EXPECT_NEAR(s.total, e.distance, 1e-6 * (1 + e.distance));
      expect_masses(s.query, query_weights(q), 1e-9);
      expect_masses(s.doc, doc_weights(doc), 1e-9);
      for (std::size_t i = 1; i < e.flows.size(); ++i)  // largest contribution first
        EXPECT_GE(e.flows[i - 1].mass * e.flows[i - 1].cost, e.flows[i].mass * e.flows[i].cost);
    }
}

TEST_F(Explain, RwmdDirectionsAreEachWordsNearestAndSetTheMax) {
  for (const Method method : {Method("rwmd"), Method("lc-rwmd")})
    for (const Direction direction : kDirections) {
      SearchOptions o;
      o.method = Method("rwmd");
      o.direction = direction;
      const std::vector<float> d = test::matrix(ix, qs, o);
      for (std::size_t q = 0; q < qs.size(); ++q)
        for (std::size_t doc = 0; doc < ix.n_docs(); doc += 9) {
          const Explanation e = explain(ix, qs, q, doc, method, direction);
          EXPECT_EQ(e.distance, d[q * ix.n_docs() + doc]);
          const Sides d1 = sum_flows(e.doc_to_query), d2 = sum_flows(e.query_to_doc);
          EXPECT_NEAR(d1.total, e.doc_to_query_distance, 1e-12);
          EXPECT_NEAR(d2.total, e.query_to_doc_distance, 1e-12);
          expect_masses(d1.doc, doc_weights(doc), 1e-6);  // every document word moves once
          expect_masses(d2.query, query_weights(q), 1e-6);
          EXPECT_EQ(e.doc_to_query.size(), ix.indptr()[doc + 1] - ix.indptr()[doc]);
          EXPECT_EQ(e.query_to_doc.size(), qs.length(q));
          const double set = test::directed(direction, d1.total, d2.total);
          EXPECT_EQ(e.doc_to_query_set_distance,
                    direction == Direction::document_to_query ||
                        (direction == Direction::symmetric && d1.total >= d2.total));
          EXPECT_NEAR(sum_flows(e.flows).total, set, 1e-12);
          EXPECT_NEAR(e.distance, set, 1e-6 * (1 + set));
        }
    }
}

// ACT-k and ICT: each side's weights all move, a word's in at most k + 1 steps (ICT: any),
// every step but its last within the target word's weight; both directions sum to their
// distances, the larger sets it, and it is what search reports (float against the double
// reference: within rounding).
TEST_F(Explain, ActAndIctMoveEachWordInCappedStepsAndSetTheMax) {
  struct Variant {
    Method method;
    std::size_t steps;
  };
  for (const Variant v : {Variant{Method("act"), 0}, Variant{Method("act"), 1},
                          Variant{Method("act"), 3}, Variant{Method("ict"), 1}})
    for (const Direction direction : kDirections) {
      SearchOptions o;
      o.method = v.method;
      o.parameters.set("act_steps", static_cast<double>(v.steps));
      o.direction = direction;
      const std::vector<float> d = test::matrix(ix, qs, o);
      for (std::size_t q = 0; q < qs.size(); ++q)
        for (std::size_t doc = 0; doc < ix.n_docs(); doc += 7) {
          SCOPED_TRACE(std::string(to_string(v.method)) + " k=" + std::to_string(v.steps) +
                       " query " + std::to_string(q) + " doc " + std::to_string(doc));
          const Explanation e = explain(ix, qs, q, doc, v.method, direction, o.parameters);
          EXPECT_NEAR(e.distance, d[q * ix.n_docs() + doc], 1e-5 * (1 + e.distance));
          const Sides d1 = sum_flows(e.doc_to_query), d2 = sum_flows(e.query_to_doc);
          EXPECT_NEAR(d1.total, e.doc_to_query_distance, 1e-12);
          EXPECT_NEAR(d2.total, e.query_to_doc_distance, 1e-12);
          expect_masses(d1.doc, doc_weights(doc), 1e-9);
          expect_masses(d2.query, query_weights(q), 1e-9);
          // Steps per source word, and the capacities of the target words.
          std::map<std::string, double> qcap = query_weights(q), dcap = doc_weights(doc);
          double qt = 0, dt = 0;
          for (const auto& [w, x] : qcap) qt += x;
          for (const auto& [w, x] : dcap) dt += x;
          std::map<std::string, std::size_t> d_steps, q_steps;
          for (const WordFlow& f : e.doc_to_query) ++d_steps[f.doc_word];
          for (const WordFlow& f : e.query_to_doc) ++q_steps[f.query_word];
          if (v.method == Method("act")) {
            for (const auto& [w, n] : d_steps) EXPECT_LE(n, v.steps + 1) << w;
            for (const auto& [w, n] : q_steps) EXPECT_LE(n, v.steps + 1) << w;
          }
          std::size_t over_capacity = 0;  // the last step of a word may exceed its target's
          for (const WordFlow& f : e.doc_to_query)
            over_capacity += f.mass > qcap[f.query_word] / qt + 1e-12;
          EXPECT_LE(over_capacity, d_steps.size());
          const double set = test::directed(direction, d1.total, d2.total);
          EXPECT_NEAR(sum_flows(e.flows).total, set, 1e-12);
          if (v.method == Method("act") && v.steps == 0) {  // ACT-0 is RWMD
            const Explanation r = explain(ix, qs, q, doc, Method("rwmd"), direction);
            EXPECT_NEAR(e.doc_to_query_distance, r.doc_to_query_distance, 1e-5);
            EXPECT_NEAR(e.query_to_doc_distance, r.query_to_doc_distance, 1e-5);
          }
        }
    }
}

TEST_F(Explain, ADocumentAgainstItselfMovesEveryWordOntoItselfForFree) {
  const std::vector<std::size_t> docs = {0, 5, 39};
  const QuerySet self = query_set_from_index(ix, docs);
  for (std::size_t q = 0; q < docs.size(); ++q)
    for (const Method method :
         {Method("wmd"), Method("rwmd"), Method("lc-rwmd"), Method("act"), Method("ict")}) {
      const Explanation e = explain(ix, self, q, docs[q], method);
      EXPECT_EQ(e.distance, 0.0);
      ASSERT_FALSE(e.flows.empty());
      for (const WordFlow& f : e.flows) {
        EXPECT_EQ(f.cost, 0.0);
        // WMD leaves each word's mass in place; RWMD's (and ACT's) nearest word may be another
        // with the same vector (random_index duplicates some), at the same cost 0.
        if (method == Method("wmd")) {
          EXPECT_EQ(f.query_word, f.doc_word);
        }
      }
    }
}

TEST_F(Explain, RefusesWcdAndOutOfRange) {
  EXPECT_THROW(explain(ix, qs, 0, 0, Method("wcd")), Error);
  EXPECT_THROW(explain(ix, qs, qs.size(), 0, Method("wmd")), Error);
  EXPECT_THROW(explain(ix, qs, 0, ix.n_docs(), Method("wmd")), Error);
}

}  // namespace
}  // namespace lcrwmd
