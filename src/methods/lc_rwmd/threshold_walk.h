#pragma once
// Query-to-document LC-RWMD's top-k by a threshold walk (Fagin's threshold algorithm), reading
// only the documents that can matter. D2(q, doc) = sum_t F_t min_{u in doc} c(t, u): walk the
// vocabulary in order of distance to each query word t, and a document first met on word u's
// postings for t has u as its nearest word to t. After the walk of t has reached distance
// f(t) (the next word's), every document not yet met for t is at least f(t) from it, so
//   T = sum_t F_t f(t)   bounds every document met for no word, and
//   sum_t F_t (its distance where met, else f(t))   bounds one met for some;
// both summed as D2 is (each term rounded alike and in the same order: the sums are monotone in
// their terms, so a bound is never above the distance). The walk stops once k distances are
// known and the k-th is below T; the documents met for some words whose bound still lets them
// in are finished from their own words, from the word distances phase 1 kept. The same
// documents, distances and order of ties as the linear pass over every document.
//
// Before the walk, the lists of each query word's nearest word alone, rarest first (MaxScore's
// order): a document's bound from which of them it holds, those that can enter finished from
// their own words; most typed queries end there, their best documents holding their words
// (threshold_walk.cpp, by_nearest_words). The walk takes the rest.
//
// The order of each query word's vocabulary comes from phase 1: its kept nearest words (their
// lower bounds; every other word's bound is at least the last one's), made exact and sorted;
// past them, the next words by bound selected from the kept distances, four times as many each
// time. Which word walks next: the one that lifts T most per posting read.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/batch_words.h"
#include "lcrwmd/index.h"
#include "lcrwmd/topk.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/neighbourhood_bound.h"
#include "methods/lc_rwmd/query_to_document.h"
#include "methods/lc_rwmd/word_distance_cache.h"

namespace lcrwmd {

class ThresholdWalk {
 public:
  ThresholdWalk(const Index& index, QueryRange queries, const BatchWords& batch,
                const WordDistanceCache& cache, const NearestWords& nearest,
                const QueryToDocument& d2)
      : index_(index), q_(queries), batch_(batch), cache_(cache), nearest_(nearest), d2_(d2) {}

  // Query j's k best documents, best first, ties to the smaller index, those at or beyond
  // `ceiling` and those in `skip` (ascending) left out, with how many D2 it knew (met for every
  // word, or finished); nullopt where the walk would read more than the linear pass (long
  // queries, k near the documents, words whose postings are most of the index): the caller
  // then takes that pass. Thread-safe.
  std::optional<BatchDistance::Walked> top_k(std::size_t j, std::size_t k, float ceiling,
                                             std::span<const std::uint32_t> skip) const;

 private:
  const Index& index_;
  QueryRange q_;
  const BatchWords& batch_;
  const WordDistanceCache& cache_;
  const NearestWords& nearest_;
  const QueryToDocument& d2_;
};

}  // namespace lcrwmd
