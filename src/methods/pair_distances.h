#pragma once
// Distances of one (document, query) pair, computed directly: the references every batch
// method is tested against (exact WMD, quadratic RWMD, ACT-k in double) and the per-pair steps
// the batch methods refine with (WMD's dual bound, ACT-k from a pair's word costs).
#include <cstddef>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "methods/act/act_steps.h"
#include "ot/dual_bound.h"

namespace lcrwmd {

// Exact WMD of one pair: EMD between the document's and the query's weights, Euclidean word
// costs, all in double. Errors name the pair.
double wmd_pair(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q);

// wmd_pair with the optimal flow: what the document's word (position in the document) sends
// to the query's word (position in the query), in units of the documents' total weight 1.
struct PairFlow {
  std::size_t doc_word, query_word;
  double mass, cost;
};
double wmd_pair_flow(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q,
                     std::vector<PairFlow>& flows);

// A lower bound on wmd_pair from approximate dual potentials (ot/dual_bound.h). With sq_rows
// (lower bounds of the squared costs, a row per document word, as WordDistanceCache::doc_rows
// gives them) the costs come from there instead of the vectors.
double wmd_dual_bound(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q,
                      const float* const* sq_rows, ot::DualEffort effort);

// Quadratic RWMD of one pair, both directions: d1 = R(doc -> query), d2 = R(query -> doc).
struct RwmdPair {
  float d1, d2;
};
RwmdPair rwmd_pair(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q);

// What rwmd_pair's sums are made of: each document word's nearest query word (row_min, the
// squared distance in float, and row_arg, the query word's position) and each query word's
// nearest document word (col_min, col_arg).
struct PairNearest {
  std::vector<float> row_min, col_min;
  std::vector<std::size_t> row_arg, col_arg;
};
void pair_nearest(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q,
                  PairNearest& out);

// ACT-k of one pair, both directions, directly in double (act_pair.cpp): d1 = doc -> query,
// d2 = query -> doc. `steps` = k; kIctSteps (or any k >= the words of the target side) gives ICT.
struct ActPair {
  double d1, d2;
};
ActPair act_pair(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q,
                 std::size_t steps);
// The same with every transfer: doc_moves of d1 (each document word's weight), query_moves of
// d2 (each query word's), as {document word, query word, mass, cost} by position.
ActPair act_pair_moves(const Index& index, std::size_t doc, const QuerySet& queries, std::size_t q,
                       std::size_t steps, std::vector<PairFlow>& doc_moves,
                       std::vector<PairFlow>& query_moves);

// One direction of ACT-k of one pair in float from its word costs (document words x query
// words, row-major) and both sides' stored weights; words of equal cost are taken in position
// order.
enum class ActDirection { doc_to_query, query_to_doc };
float act_from_costs(const float* cost, std::size_t dh, std::size_t qh, const float* doc_weights,
                     const float* query_weights, std::size_t steps, ActDirection direction);

}  // namespace lcrwmd
