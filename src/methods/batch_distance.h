#pragma once
// One method's distances between a batch of queries and every resident document (the CPU's
// method interface and its makers; the per-pair distances are in methods/pair_distances.h). Keeping
// "compute a block of distances" apart from "collect the top-k" lets every method share one
// search driver, and lets a bounded method (symmetric LC-RWMD: D1 bounds D from below) be
// refined only where the bound does not already rule a document out.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/topk.h"
#include "methods/act/act_steps.h"
#include "methods/lc_rwmd/phase1.h"

namespace lcrwmd {

struct QueryRange {
  const QuerySet& set;
  std::size_t begin, end;
  std::size_t size() const { return end - begin; }
};

class WordDistanceCache;

// What a batch's compute() gives where a method can choose: its distances, or bounds where
// those are cheaper and refine() finishes them (distances); lower bounds that refine() makes
// exact where the top-k needs them (bounds: LC-RWMD's D1 from phase 1's least lower bounds, and
// only the words of the few documents refined need their nearest query word found exactly); or
// every distance exactly, in bulk where a method has a way cheaper than refining each document
// (exact: a distance matrix, the hybrid's z-scores; LC-RWMD's D2 as a gather over every word's
// exact distance). A method without such a way answers exact as distances.
enum class Rows { distances, bounds, exact };
// What a top-k search asks for: with pruning, the bounds of a method that refines lazily
// (MethodImpl::bounds_rows: LC-RWMD's D1); every other (and query-to-document, whose phase 1
// finds no D1) computes its distances or its own bounds either way (batch_plan.cpp).
Rows top_k_rows(const SearchOptions& opt);

struct Phase1Counts {
  std::size_t word_pairs = 0, recomputed = 0;
};

class BatchDistance {
 public:
  virtual ~BatchDistance() = default;
  // out[q * n_docs + i] for q in [0, batch size): the distance, or a lower bound of it when
  // exact() is false.
  virtual void compute(float* out) = 0;
  virtual bool exact() const { return true; }
  // The distance of (q, doc) from its lower bound; thread-safe.
  virtual float refine(std::size_t /*q*/, std::size_t /*doc*/, float lower) const { return lower; }
  // out[i] = refine(q, docs[i], 0) for documents with no bound at hand, many at once where a
  // method shares their work (query-to-document LC-RWMD's common words); thread-safe.
  virtual void refine_each(std::size_t q, std::span<const std::uint32_t> docs, float* out) const {
    for (std::size_t i = 0; i < docs.size(); ++i) out[i] = refine(q, docs[i], 0);
  }
  // Methods whose refine() is costly may offer steps between: tighten(q, doc, lower, level)
  // for level < tighten_levels() returns a lower bound at least as tight as `lower` (that of
  // the level before), each level costlier and tighter than the last; thread-safe.
  virtual std::size_t tighten_levels() const { return 0; }
  // The steps below this level are cheap next to the rest: a top-k takes many of them at a
  // time, the costlier ones one per thread, each round's results tightening the k-th best
  // before the next.
  virtual std::size_t cheap_levels() const { return 1; }
  // Methods that can lift every document's bound of one query at once, from what the bounds
  // of the nearest say (WMD's pricing bound), do it here: row holds query q's lower bounds,
  // one per document, and each may only rise and stay a lower bound; thread-safe.
  virtual void raise_bounds(std::size_t /*q*/, float* /*row*/) const {}
  // The word distances symmetric LC-RWMD keeps (lower bounds, with a way to the exact ones);
  // null where the method keeps none.
  virtual const WordDistanceCache* word_distances() const { return nullptr; }
  // What phase 1 did: (vocabulary word, query) pairs decided, word distances recomputed (with
  // Rows::bounds, by the refinements so far).
  virtual Phase1Counts phase1_counts() const { return {}; }
  virtual float tighten(std::size_t /*q*/, std::size_t /*doc*/, float lower,
                        std::size_t /*level*/) const {
    return lower;
  }
  // A method that finds a query's top-k by reading only what can matter (query-to-document
  // LC-RWMD's threshold walk over its words' postings) says so before compute(), which then
  // writes no rows: walk() answers each query, or where walking would cost more than the
  // linear pass, gives nullopt, and row() writes that query's row (distances, or bounds when
  // exact() is false) for the usual top-k. Both thread-safe.
  virtual bool walks() const { return false; }
  struct Walked {
    std::vector<Neighbor> top;
    std::size_t computed = 0;  // documents whose distance it computed
  };
  virtual std::optional<Walked> walk(std::size_t /*q*/, std::size_t /*k*/, float /*ceiling*/,
                                     std::span<const std::uint32_t> /*skip*/) const {
    return std::nullopt;
  }
  virtual void row(std::size_t /*q*/, float* /*out*/) const {}
};

std::unique_ptr<BatchDistance> make_wcd(const Index& index, QueryRange queries);
// Okapi BM25 as distances (minus its scores; 0 where a document shares no term); an Error where
// the index has no terms or the queries none (bm25.cpp).
std::unique_ptr<BatchDistance> make_bm25(const Index& index, QueryRange queries, double k1,
                                         double b);
std::unique_ptr<BatchDistance> make_quadratic_rwmd(const Index& index, QueryRange queries,
                                                   Direction direction);
// cache_budget: bytes the symmetric and query-to-document variants may keep for the vocabulary x
// query-word distances; without room, D2 falls back to direct per-pair distances.
// walk: query-to-document's top-k may walk its words' postings (BatchDistance::walks).
std::unique_ptr<BatchDistance> make_lc_rwmd(const Index& index, QueryRange queries,
                                            Direction direction, const Phase1& phase1,
                                            std::size_t cache_budget, Rows rows = Rows::distances,
                                            bool walk = false);
// Bytes LC-RWMD keeps per (vocabulary word, query) of a batch, beyond a symmetric cache.
std::size_t lc_rwmd_pair_bytes(Rows rows);

// Linear-complexity ACT-k, document -> query (lc_act.cpp); steps = k (0: LC-RWMD's D1,
// kIctSteps: ICT).
std::unique_ptr<BatchDistance> make_lc_act(const Index& index, QueryRange queries,
                                           std::size_t steps, const Phase1& phase1);

// Each vocabulary word's largest weight in a document: how far ICT's phase 1 has to order a
// word's nearest query words (both backends).
std::vector<float> largest_word_weights(const Index& index);

// ACT-k or ICT, document-to-query (make_lc_act), symmetric (max(D1, D2)) or query-to-document
// (D2 alone): bounded below by the linear-complexity D1 (symmetric) and LC-RWMD's bound of the
// same direction, tightened to the pair's RWMD, with D2 computed per pair where the bounds do
// not rule it out, from LC-RWMD's cached word distances where cache_budget holds them.
std::unique_ptr<BatchDistance> make_act(const Index& index, QueryRange queries, Direction direction,
                                        std::size_t steps, const Phase1& phase1,
                                        std::size_t cache_budget);

// Exact WMD: bounded by symmetric LC-RWMD (computed with the same options and cache budget),
// lifted for all documents at once by a pricing bound (raise_bounds), tightened to a quick and
// then a close dual bound of the pair's EMD, refined by an EMD solve.
std::unique_ptr<BatchDistance> make_wmd(const Index& index, QueryRange queries,
                                        const Phase1& phase1, std::size_t cache_budget);

}  // namespace lcrwmd
