#pragma once
// LC-RWMD's query-to-document side for one batch: D2 = R(q_j -> doc) = sum_t F_j[t] *
// min_{u in doc} c(u, w_t), each query word to its nearest document word, from the word
// distances phase 1 kept (methods/lc_rwmd/word_distance_cache.h) or, where the budget held none,
// from the vectors. A document's exact D2 (a refinement), a lower bound of it (a gather over the
// kept bounds), or every document's at once once the kept distances are made exact.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/batch_words.h"
#include "lcrwmd/index.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/word_distance_cache.h"

namespace lcrwmd {

class QueryToDocument {
 public:
  // cache: null where the budget held none (then only exact() may be asked).
  QueryToDocument(const Index& index, QueryRange queries, const BatchWords& batch,
                  const WordDistanceCache* cache)
      : index_(index), q_(queries), batch_(batch), cache_(cache) {}

  // D2 of the batch's query j and a document; thread-safe.
  float exact(std::size_t j, std::size_t doc) const;
  // out[i] = exact(j, docs[i]), the same bits, for many documents at once: each document's
  // words within reach found first (as exact() finds them), then each such (vocabulary word,
  // query word) pair computed once, its vector fetched ahead, then each document's sum. For a
  // set of documents read together (the hybrid's sample), whose common words would otherwise
  // be recomputed in each, one miss to memory at a time; thread-safe.
  void exact_each(std::size_t j, std::span<const std::uint32_t> docs, float* out) const;
  // A lower bound of it from the cache's bounds (the same sum of smaller terms); thread-safe.
  float lower(std::size_t j, std::size_t doc) const;
  // out[j * n_docs + i] = D2 of every query and document, or max(out, D2) with `with_d1`,
  // from the cache made exact (WordDistanceCache::make_exact): one gather over each document's
  // words' whole rows, every query of the batch at once. The minimum over every word equals
  // exact()'s over the words that can be nearest and the same sum follows: the same bits.
  void every(float* out, bool with_d1) const;
  // D2 of query j and a document whose word terms' roots (distances, in the query's order)
  // root holds where known and +inf where not: those found from its words as exact() finds
  // them (from the cache, which must be there), then the sum exact() makes: the same bits.
  float finish(std::size_t j, std::size_t doc, float* root) const;
  // sum_t F_j[t] sqrt(sq[t]), in order: D2 from its word terms, and a bound of it from
  // smaller terms (each step rounds monotonically, so the sum of smaller terms is no larger).
  float weighted_root_sum(std::size_t j, const float* sq) const;
  // The same sum from the terms' roots (root[t] = sqrt(sq[t]), correctly rounded): the same
  // bits, without a square root per term where the roots are kept.
  float weighted_sum(std::size_t j, const float* root) const {
    const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
    const std::size_t h = q_.set.length(q_.begin + j);
    float s = 0;
    for (std::size_t t = 0; t < h; ++t) s += f[t] * root[t];
    return s;
  }

 private:
  // out[d * h + t]: the least of the cache's entry c0 + t over document doc + d's words.
  void cache_min(std::size_t doc, std::size_t n_docs, std::size_t c0, std::size_t h,
                 float* out) const;

  const Index& index_;
  QueryRange q_;
  const BatchWords& batch_;
  const WordDistanceCache* cache_;
};

}  // namespace lcrwmd
