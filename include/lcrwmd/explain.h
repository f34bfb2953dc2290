#pragma once
// Why a document is at its distance from a query: which words carried the distance.
//
//   Explanation e = explain(index, queries, 0, doc, Method("wmd"));
//   for (const WordFlow& f : e.flows) ...   // query word -> document word, mass, cost
//
// wmd: the optimal flow of the EMD solver (the one search's distance comes from). rwmd and
// lc-rwmd (the same relaxation): each word's nearest counterpart in both directions; act and
// ict: each word's capped transfers to its nearest counterparts, in both directions (from the
// per-pair reference in double, which the search's float values equal within rounding).
// `flows` is the direction that set the distance (the larger where symmetric, else the one
// asked for).
#include <cstddef>
#include <string>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

// `mass` of the query's word moved to the document's word, at `cost` (their Euclidean
// distance) per unit: it adds mass * cost to the distance. Masses are fractions of each
// document's total weight 1.
struct WordFlow {
  std::string query_word, doc_word;
  double mass = 0, cost = 0;
};

struct Explanation {
  std::string query, doc;  // ids
  Method method{"wmd"};
  Direction direction = Direction::symmetric;
  // As search reports it (a float); the flows' mass * cost sum to it within that rounding.
  double distance = 0;
  std::vector<WordFlow> flows;  // largest mass * cost first
  // rwmd, lc-rwmd, act, ict: both directions. doc_to_query moves every document word's
  // weight (R(doc -> query), LC-RWMD's D1), query_to_doc every query word's (D2); rwmd each
  // word's to its nearest counterpart, act and ict in capped steps. `flows` is a copy of the
  // one that set the distance.
  std::vector<WordFlow> doc_to_query, query_to_doc;
  double doc_to_query_distance = 0, query_to_doc_distance = 0;
  bool doc_to_query_set_distance = true;
  bool sides = false;   // the two directions above are filled (the relaxations; not wmd)
  bool capped = false;  // each word moves in capped steps to its nearest words (act, ict)
};

// Query q of `queries` against document `doc` of the index, with the method's parameters (act:
// act_steps). Throws lcrwmd::Error for wcd (a distance of centroids moves no word) or an index
// out of range.
Explanation explain(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                    Method method, Direction direction = Direction::symmetric,
                    const ParameterValues& parameters = {});

}  // namespace lcrwmd
