// explain(): the word-level flows behind one query-document distance, from the same
// computations search runs (wmd_pair's solver, rwmd_pair's minima) or their reference (ACT's
// per-pair transfers in double).
#include "lcrwmd/explain.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lcrwmd/error.h"
#include "methods/act/act_steps.h"
#include "methods/method_impl.h"
#include "methods/pair_distances.h"

namespace lcrwmd {
namespace {

std::string query_word(const Index& index, const QuerySet& qs, std::uint32_t u) {
  return u < index.vocab_size() ? std::string(index.word(u))
                                : qs.extra_words[u - index.vocab_size()];
}

void largest_first(std::vector<WordFlow>& flows) {
  std::stable_sort(flows.begin(), flows.end(), [](const WordFlow& a, const WordFlow& b) {
    return a.mass * a.cost > b.mass * b.cost;
  });
}

// Both directions in hand: sorted, and the one that sets the distance (the larger where
// symmetric, else the one asked for) copied to flows.
void finish_directions(double d1, double d2, Explanation& e) {
  e.sides = true;
  largest_first(e.doc_to_query);
  largest_first(e.query_to_doc);
  e.doc_to_query_distance = d1;
  e.query_to_doc_distance = d2;
  e.doc_to_query_set_distance = e.direction == Direction::document_to_query ||
                                (e.direction == Direction::symmetric && d1 >= d2);
  e.flows = e.doc_to_query_set_distance ? e.doc_to_query : e.query_to_doc;
  e.distance = static_cast<float>(e.doc_to_query_set_distance ? d1 : d2);
}

}  // namespace

// Both RWMD directions from rwmd_pair's minima and in its arithmetic (sums in double), so
// each direction's sum is that distance.
void explain_rwmd(const Index& index, const QuerySet& qs, std::size_t q, std::size_t doc,
                  const SearchOptions&, Explanation& e) {
  PairNearest near;
  pair_nearest(index, doc, qs, q, near);
  const std::size_t db = index.indptr()[doc], qb = qs.indptr[q];
  double d1 = 0, d2 = 0;
  for (std::size_t p = 0; p < near.row_min.size(); ++p) {
    const double w = index.values()[db + p], c = std::sqrt(double{near.row_min[p]});
    d1 += w * c;
    e.doc_to_query.push_back({query_word(index, qs, qs.words[qb + near.row_arg[p]]),
                              std::string(index.word(index.indices()[db + p])), w, c});
  }
  for (std::size_t t = 0; t < near.col_min.size(); ++t) {
    const double w = qs.weights[qb + t], c = std::sqrt(double{near.col_min[t]});
    d2 += w * c;
    e.query_to_doc.push_back({query_word(index, qs, qs.words[qb + t]),
                              std::string(index.word(index.indices()[db + near.col_arg[t]])), w,
                              c});
  }
  finish_directions(d1, d2, e);
}

// ACT-k and ICT: the reference's transfers, both directions.
void explain_act(const Index& index, const QuerySet& qs, std::size_t q, std::size_t doc,
                 const SearchOptions& o, Explanation& e) {
  std::vector<PairFlow> doc_moves, query_moves;
  const ActPair d = act_pair_moves(index, doc, qs, q, act_steps(o), doc_moves, query_moves);
  e.capped = true;
  const std::size_t db = index.indptr()[doc], qb = qs.indptr[q];
  const auto flow = [&](const PairFlow& f) {
    return WordFlow{query_word(index, qs, qs.words[qb + f.query_word]),
                    std::string(index.word(index.indices()[db + f.doc_word])), f.mass, f.cost};
  };
  for (const PairFlow& f : doc_moves) e.doc_to_query.push_back(flow(f));
  for (const PairFlow& f : query_moves) e.query_to_doc.push_back(flow(f));
  finish_directions(d.d1, d.d2, e);
}

void explain_wmd(const Index& index, const QuerySet& qs, std::size_t q, std::size_t doc,
                 const SearchOptions&, Explanation& e) {
  std::vector<PairFlow> flows;
  e.distance = static_cast<float>(wmd_pair_flow(index, doc, qs, q, flows));
  const std::size_t db = index.indptr()[doc], qb = qs.indptr[q];
  for (const PairFlow& f : flows)
    e.flows.push_back({query_word(index, qs, qs.words[qb + f.query_word]),
                       std::string(index.word(index.indices()[db + f.doc_word])), f.mass, f.cost});
  largest_first(e.flows);
}

Explanation explain(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                    Method method, Direction direction, const ParameterValues& parameters) {
  SearchOptions o;
  o.method = method;
  o.direction = direction;
  o.parameters = parameters;
  if (!method->explains())  // before its direction: no direction of it explains
    throw OptionError("method", std::string("explain: ") + to_string(method) +
                                    " has no words to show; use " +
                                    method_names([](const MethodInfo& m) { return m.explains(); }));
  check_options(o);
  if (q >= queries.size())
    throw Error("explain: query " + std::to_string(q) + " of " + std::to_string(queries.size()));
  if (doc >= index.n_docs())
    throw Error("explain: document " + std::to_string(doc) + " of " +
                std::to_string(index.n_docs()));
  Explanation e;
  e.query = queries.ids[q];
  e.doc = index.doc_id(doc);
  e.method = method;
  e.direction = direction;
  method->impl->explain(index, queries, q, doc, o, e);
  return e;
}

}  // namespace lcrwmd
