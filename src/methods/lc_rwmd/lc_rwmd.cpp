// Linear-complexity RWMD (Atasu et al. 2017) on the CPU.
//
// Phase 1: squared distances between every vocabulary word and every distinct query word of
//   the batch, tile by tile from the searcher's GEMM as certified intervals
//   (methods/lc_rwmd/phase1.h), then for each query the minimum over its own words, Z[u, j] =
//   min_{w in q_j} c(u, w): the smallest upper bound among a query's words limits where the nearest
//   can be, and only the words whose lower bound is under that limit are recomputed from the
//   vectors (methods/lc_rwmd/tile_minima.h).
// Phase 2: D1 = X1 . Z (CSR times dense): D1[i, j] = R(doc_i -> q_j) for every document.
// D2[i, j] = R(q_j -> doc_i) reuses phase 1's lower bounds (kept when the memory budget allows)
//   as a gather-min over the document's words, so no second GEMM is needed: first as a bound,
//   then, where that does not rule the document out, exactly (the candidates recomputed;
//   methods/lc_rwmd/query_to_document.h).
// A top-k (Rows::bounds) skips phase 1's exact minima: Z holds the square root of each pair's
//   least lower bound, so D1 from it bounds D1 from below, tightly (one-sided, on 20news and
//   Set 1, 10-14 documents per query have a bound under the 10th distance). refine() then finds
//   the exact minima of the refined documents' words alone (~2% of the vocabulary per query)
//   from the least three lower bounds phase 1 kept, and sums them as phase 2 does.
// The symmetric lower bound handed to the driver is max(D1, B2) (D1's bound with Rows::bounds),
//   with B2 a bound on D2 computed in the same sparse pass: a query word the document lacks is
//   at least as far from every document word as from its nearest other vocabulary word, nn(t)
//   (a by-product of phase 1), so D2 >= B2 = sum_t F_t nn(t) - sum_{t in doc} F_t nn(t). With
//   D1 alone as the bound, ~7x more documents need D2 on the Set-1 shape. The driver's top-k
//   tightens a candidate's bound twice before its D2: from each query word's nearest words
//   (methods/lc_rwmd/neighbourhood_bound.h, kept by phase 1), then from the cache's gather.
// Query-to-document (D2 alone) runs the same phase 1 without Z's minima (only the cache and
//   each batch word's nearest other word), so that phase 2's bound is B2 and the driver's top-k
//   tightens it from the cache and refines it to D2 as the symmetric form does; linear in the
//   vocabulary and the documents' words like D1.
// Query-to-document's pruned top-k skips phase 2 altogether: each query walks its words'
//   nearest vocabulary words' postings until the k-th best D2 beats every document not met
//   (methods/lc_rwmd/threshold_walk.h), from the cache and the nearest words phase 1 kept; a
//   query the walk would cost more for (long, or k near the documents) gets phase 2's row.
// Every document's D2 (Rows::exact: a distance matrix, the hybrid) is the same gather-min over
//   the cache made exact (every vocabulary word against every batch word, from the vectors): a
//   GEMM's worth of exact distances and one sparse pass, where refining each document would
//   recompute a few distances per word of every document (an order of magnitude slower for
//   the Set-1 hybrid).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/batch_words.h"
#include "core/numerics.h"
#include "cpu/simd.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/neighbourhood_bound.h"
#include "methods/lc_rwmd/phase1.h"
#include "methods/lc_rwmd/query_to_document.h"
#include "methods/lc_rwmd/threshold_walk.h"
#include "methods/lc_rwmd/tile_minima.h"
#include "methods/lc_rwmd/word_distance_cache.h"
#include "methods/method_impl.h"
#include "util/large_array.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kUnknown = std::numeric_limits<float>::quiet_NaN();
std::atomic<std::uint64_t> generations{0};
using numerics::kB2Slack;

constexpr std::size_t kMaxLazyQueryWords = std::size_t{1} << 16;

// Whether every query's word positions fit cpu::KeptLeast.
bool positions_fit(QueryRange q) {
  for (std::size_t j = q.begin; j < q.end; ++j)
    if (q.set.length(j) > kMaxLazyQueryWords) return false;
  return true;
}

class LcRwmd final : public BatchDistance {
 public:
  LcRwmd(const Index& index, QueryRange q, Direction direction, const Phase1& p1,
         std::size_t cache_budget, Rows rows, bool walk)
      : index_(index),
        q_(q),
        forward_(direction != Direction::query_to_document),
        reverse_(direction != Direction::document_to_query),
        lazy_(forward_ && rows == Rows::bounds && positions_fit(q)),
        batch_(index, q.set, q.begin, q.end),
        tiles_(index, p1, batch_),
        cache_(reverse_ && WordDistanceCache::bytes(index, batch_.cols.size()) <= cache_budget
                   ? std::make_unique<WordDistanceCache>(index, batch_, tiles_)
                   : nullptr),
        d2_(index, q, batch_, cache_.get()),
        nearest_(reverse_ ? batch_.words.size() : 0) {
    // Refining computes at least one exact distance per (document, query word); the bulk way
    // one per (vocabulary word, batch word), and is taken where that is no more.
    every_d2_ = cache_ && rows == Rows::exact &&
                index.vocab_size() * batch_.words.size() <= index.n_docs() * batch_.cols.size();
    walk_ = walk && !forward_ && rows == Rows::distances && cache_;
  }

  bool exact() const override { return (!reverse_ || every_d2_) && !lazy_; }

  void compute(float* out) override {
    if (every_d2_ && !forward_) {  // D2 alone, from the exact distances: phase 1 has no part
      counts_ = {index_.vocab_size() * nq(), 0};
    } else {
      phase1();
      if (walk_) {  // each query's walk reads what it needs; row() the rest
        walker_ = std::make_unique<ThresholdWalk>(index_, q_, batch_, *cache_, nearest_, d2_);
        return;
      }
      phase2(out);
    }
    if (every_d2_) {
      cache_->make_exact();
      counts_.recomputed += index_.vocab_size() * batch_.words.size();
      d2_.every(out, forward_);
    }
  }

  // D2's neighbourhood bound first (a lookup per document word), then, with the cache, D2
  // from its lower bounds (a gather of a row per document word), exact only where neither
  // rules the document out.
  std::size_t tighten_levels() const override { return reverse_ ? (cache_ ? 2 : 1) : 0; }
  // Both next to D2 (and D1) computed: a Set-1 query takes ~1,500 gathers.
  std::size_t cheap_levels() const override { return tighten_levels(); }
  float tighten(std::size_t j, std::size_t doc, float d1, std::size_t level) const override {
    return std::max(d1, level == 0 ? neighbourhood_->lower(j, doc) : d2_.lower(j, doc));
  }

  float refine(std::size_t j, std::size_t doc, float d1) const override {
    if (!forward_) return d2_.exact(j, doc);  // the exact D2, whatever its bound
    if (!lazy_) return std::max(d1, d2_.exact(j, doc));
    const float exact_d1 = d1_exactly(j, doc);
    return reverse_ ? std::max(exact_d1, d2_.exact(j, doc)) : exact_d1;
  }

  void refine_each(std::size_t j, std::span<const std::uint32_t> docs, float* out) const override {
    if (forward_) return BatchDistance::refine_each(j, docs, out);
    d2_.exact_each(j, docs, out);
  }

  bool walks() const override { return walk_; }
  std::optional<Walked> walk(std::size_t j, std::size_t k, float ceiling,
                             std::span<const std::uint32_t> skip) const override {
    return walker_->top_k(j, k, ceiling, skip);
  }
  // Phase 2's bounds of D2 (with D1 where forward_: phase 1's Z then holds it) for query j
  // alone: a one-query batch's phase 2, and the row of a query whose walk would cost more.
  void row(std::size_t j, float* out) const override {
    const std::size_t n = index_.n_docs(), v = index_.vocab_size(), Q = nq();
    LargeArray<float> column;
    const float* z = z_.data();
    if (Q > 1) {
      column.resize(v);
      for (std::size_t u = 0; u < v; ++u) column[u] = z_[u * Q + j];
      z = column.data();
    }
    const std::uint64_t* indptr = index_.indptr().data();
    const std::uint32_t* idx = index_.indices().data();
    const float* val = index_.values().data();
    const cpu::Kernels& k = cpu::kernels();
#pragma omp parallel for schedule(static, 1024) if (!omp_in_parallel())
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = indptr[i], h = indptr[i + 1] - b;
      const cpu::SplitDot d = k.sparse_dot_split(idx + b, val + b, h, z);
      out[i] = bound(d.dot, nn_sum_[j], d.negative);
    }
  }

  const WordDistanceCache* word_distances() const override { return cache_.get(); }
  Phase1Counts phase1_counts() const override {
    return {counts_.word_pairs, counts_.recomputed + refined_words_.load()};
  }

 private:
  std::size_t nq() const { return q_.size(); }

  void phase1() {
    const std::size_t v = index_.vocab_size(), w = batch_.words.size(), Q = nq();
    const std::size_t R = tiles_.rows(), block = tiles_.block_words();
    z_.resize(v * Q);  // forward: every entry is written below, tile by tile
    if (!forward_) {
      // Query-to-document: no D1, only B2's terms (below) in a Z of zeros.
      float* z = z_.data();
#pragma omp parallel for schedule(static)
      for (std::size_t e = 0; e < v * Q; ++e) z[e] = 0.0f;
    }
    if (lazy_) least_.resize(v * Q);
    std::size_t recomputed = 0;
    const cpu::Kernels& k = cpu::kernels();
    const bool strips_alone = tiles_.strips_alone() && (lazy_ || !forward_);
#pragma omp parallel reduction(+ : recomputed)
    {
      Phase1Tiles::Workspace ws(tiles_, R, !strips_alone);
      // Per (query, row): the least three lower bounds and the positions in cols of the least
      // two; then the nearest word's squared distance.
      std::vector<float> v1(Q * R), v2(Q * R), v3(Q * R), best(Q * R);
      std::vector<std::uint32_t> a1(Q * R), a2(Q * R);
      const cpu::Least3 least3{v1.data(), v2.data(), v3.data(), a1.data(), a2.data()};
      TileMinima minima(index_, batch_, tiles_);
      NearestWords my_nearest(reverse_ ? w : 0);
      LargeArray<float> strip(w * kStripRows);
      // From the vocabulary's end: the least bounds of a batch word lie more often among its
      // later words (measured: on 20news this order halves NearestWords' insertions, as
      // fewer later entries displace those kept first).
#pragma omp for schedule(dynamic)
      for (std::size_t i = 0; i < tiles_.n_tiles(); ++i) {
        const std::size_t b = tiles_.n_tiles() - 1 - i;
        const std::size_t u0 = tiles_.first_row(b), rows = tiles_.rows_in(b);
        if (!strips_alone)  // the exact minima below read the estimates
          for (std::size_t w0 = 0; w0 < w; w0 += block)
            tiles_.estimate(ws, u0, rows, w0, std::min(block, w - w0));
        // The tile's lower bounds a strip of rows at a time, each used while it is in the
        // CPU's L2: every query's least three over its words (held in registers), the cache's
        // rows, the nearest words of each batch word.
        for (std::size_t r0 = 0; r0 < rows; r0 += kStripRows) {
          const std::size_t n = std::min(kStripRows, rows - r0);
          tiles_.bound_strip(ws, u0, r0, n, strip.data(), kStripRows);
          if (forward_)
            k.least_three_queries(
                {v1.data() + r0, v2.data() + r0, v3.data() + r0, a1.data() + r0, a2.data() + r0}, R,
                strip.data(), kStripRows, n, batch_.cols.data(), batch_.cols_indptr.data(), Q);
          if (!reverse_) continue;
          if (cache_) cache_->store(u0 + r0, n, strip.data(), kStripRows);
          my_nearest.add_strip(u0 + r0, n, strip.data(), kStripRows);
        }
        if (!forward_) continue;
        if (lazy_) {
          // Z's bound, sqrt of the least lower bound, and what refine() needs beside it.
          k.keep_least(least3, R, rows, Q, batch_.cols_indptr.data(), z_.data() + u0 * Q,
                       least_.data() + u0 * Q, Q);
          continue;
        }
        recomputed += minima.find(ws, u0, rows, least3, best.data());
        // Z's rows from best's columns, sixteen rows at a time (both stay in the caches).
        for (std::size_t r0 = 0; r0 < rows; r0 += 16)
          for (std::size_t j = 0; j < Q; ++j)
            for (std::size_t r = r0; r < std::min(rows, r0 + 16); ++r)
              z_[(u0 + r) * Q + j] = std::sqrt(best[j * R + r]);
      }
      if (reverse_) {
#pragma omp critical
        nearest_.merge(my_nearest);
      }
    }
    counts_ = {v * Q, recomputed};
    if (!reverse_) return;
    nearest_.sort();
    neighbourhood_ = std::make_unique<NeighbourhoodBound>(index_, q_, batch_, nearest_);
    // B2 terms F_j(t) nn(t) ride in Z as negative numbers: Z[u, j] is exactly 0 for the
    // query's own words, so the sign tells them apart and one gather serves D1 and B2.
    nn_sum_.assign(Q, 0.0f);
    for (std::size_t j = 0; j < Q; ++j) {
      const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
      double total = 0;
      for (std::uint64_t p = batch_.cols_indptr[j]; p < batch_.cols_indptr[j + 1]; ++p) {
        const std::uint32_t c = batch_.cols[p];
        const float term =
            f[p - batch_.cols_indptr[j]] * std::sqrt(nearest_.nearest_other(c, batch_.vocab_id[c]));
        total += term;
        if (batch_.vocab_id[c] >= 0)
          z_[static_cast<std::size_t>(batch_.vocab_id[c]) * Q + j] = -term;
      }
      nn_sum_[j] = static_cast<float>(total);
    }
  }

  // Rows::bounds: vocabulary word u's squared distance to its nearest word of query j, from the
  // least three lower bounds phase 1 kept: the least one's word recomputed, the second's where
  // its bound is within reach, and where the third's is, every other word (or, where the
  // symmetric search keeps every pair's bound in the cache, those within reach). The minimum of
  // a set that holds the nearest word, as phase 1 finds it otherwise: the same value.
  float nearest_sq(std::size_t u, std::size_t j, std::size_t& recomputed) const {
    const std::uint64_t c0 = batch_.cols_indptr[j], c1 = batch_.cols_indptr[j + 1];
    if (c0 == c1) return kInf;
    const cpu::KeptLeast& l = least_[u * nq() + j];
    const std::uint64_t p1 = c0 + l.a1, p2 = c0 + l.a2;
    float best = tiles_.exact(u, batch_.cols[p1]);
    ++recomputed;
    if (!(l.v2 <= best)) return best;
    best = std::min(best, tiles_.exact(u, batch_.cols[p2]));
    ++recomputed;
    if (!(l.v3 <= best)) return best;
    if (cache_) {
      // int8's wide intervals send a few of a search's refined words here; recomputing every
      // other word of their (long) queries was most of its recomputations.
      const float* lo = cache_->row(u) + c0;
      for (std::uint64_t p = c0; p < c1; ++p)
        if (p != p1 && p != p2 && !(lo[p - c0] > best)) {
          best = std::min(best, tiles_.exact(u, batch_.cols[p]));
          ++recomputed;
        }
      return best;
    }
    // Every other word of the query, four at a time (the squared distance is symmetric in its
    // two vectors, bit for bit).
    thread_local std::vector<const float*> others;
    thread_local std::vector<float> found;
    others.clear();
    for (std::uint64_t p = c0; p < c1; ++p)
      if (p != p1 && p != p2)
        others.push_back(batch_.vectors.data() + batch_.cols[p] * index_.dim());
    found.resize(others.size());
    cpu::kernels().sq_dist_batch(others.data(), index_.vector(u), others.size(), index_.dim(),
                                 found.data());
    recomputed += others.size();
    for (const float d : found) best = std::min(best, d);
    return best;
  }

  // Rows::bounds: the exact D1 of (query j, doc), summed as phase 2 sums it: the same gather
  // over the document's words, from a row of Z holding the exact minima of those words.
  // Each thread keeps that row for the query it refines (a batch's queries are refined one
  // after another on one thread each, or one query on all threads), so that a word many
  // refined documents share is found once: never more distances than phase 1 would recompute
  // for every word, bar the rare pairs that look at every query word.
  float d1_exactly(std::size_t j, std::size_t doc) const {
    struct Memo {
      std::uint64_t batch = 0;
      std::size_t query = 0;
      std::vector<float> z;  // per vocabulary word; NaN where not found yet
      std::vector<std::uint32_t> found;
    };
    thread_local Memo memo;
    if (memo.batch != generation_ || memo.query != j) {
      // The last query's words forgotten before the resize: its index may have had more.
      for (const std::uint32_t u : memo.found) memo.z[u] = kUnknown;
      memo.found.clear();
      memo.z.resize(index_.vocab_size(), kUnknown);
      memo.batch = generation_, memo.query = j;
    }
    const auto words = index_.doc_words(doc);
    std::size_t recomputed = 0;
    for (const std::uint32_t u : words)
      if (std::isnan(memo.z[u])) {
        memo.z[u] = std::sqrt(nearest_sq(u, j, recomputed));
        memo.found.push_back(u);
      }
    refined_words_.fetch_add(recomputed, std::memory_order_relaxed);
    const std::uint64_t b = index_.indptr()[doc];
    return cpu::kernels().sparse_dot(words.data(), index_.values().data() + b, words.size(),
                                     memo.z.data());
  }

  // max(D1, B2), with B2 lowered by 1e-4 of its full sum: the two sums of B2 round
  // differently, and rounding must never lift the bound above D2 (nor above 0 for itself).
  static float bound(float d1, float nn_sum, float shared) {
    return std::max(d1, nn_sum - shared - kB2Slack * nn_sum);
  }

  void phase2(float* out) const {
    const std::size_t n = index_.n_docs(), Q = nq();
    const std::uint64_t* indptr = index_.indptr().data();
    const std::uint32_t* idx = index_.indices().data();
    const float* val = index_.values().data();
    const float* z = z_.data();
    const cpu::Kernels& k = cpu::kernels();
    if (Q == 1 && reverse_) return row(0, out);
    if (Q == 1) {
#pragma omp parallel for schedule(static, 1024)
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t b = indptr[i], h = indptr[i + 1] - b;
        out[i] = k.sparse_dot(idx + b, val + b, h, z);
      }
      return;
    }
    constexpr std::size_t kDocs = 16;  // one cache line of each output row per block
    const std::size_t n_blocks = (n + kDocs - 1) / kDocs;
#pragma omp parallel
    {
      std::vector<float> acc(kDocs * Q), shared(reverse_ ? kDocs * Q : 0);
      std::vector<float> lanes(2 * cpu::kSumLanes * Q);
#pragma omp for schedule(static)
      for (std::size_t blk = 0; blk < n_blocks; ++blk) {
        const std::size_t i0 = blk * kDocs, nd = std::min(kDocs, n - i0);
        k.sparse_times_dense(indptr + i0, idx, val, nd, z, Q, acc.data(),
                             reverse_ ? shared.data() : nullptr, lanes.data());
        for (std::size_t j = 0; j < Q; ++j)
          for (std::size_t r = 0; r < nd; ++r)
            out[j * n + i0 + r] =
                reverse_ ? bound(acc[r * Q + j], nn_sum_[j], shared[r * Q + j]) : acc[r * Q + j];
      }
    }
  }

  const Index& index_;
  QueryRange q_;
  bool forward_;      // D1 (document -> query) counts: symmetric or document-to-query
  bool reverse_;      // D2 (query -> document) counts: symmetric or query-to-document
  bool lazy_;         // Rows::bounds: Z holds bounds, refine() finds the exact minima
  bool every_d2_;     // Rows::exact with the cache: every document's D2 in compute()
  bool walk_;         // query-to-document top-k: each query walks (threshold_walk.h)
  BatchWords batch_;  // the batch's distinct words (phase-1 columns) and each query's columns
  Phase1Tiles tiles_;
  std::unique_ptr<WordDistanceCache> cache_;  // reverse_, where the budget holds it
  QueryToDocument d2_;
  NearestWords nearest_;  // reverse_: each batch word's nearest vocabulary words, by bound
  std::unique_ptr<NeighbourhoodBound> neighbourhood_;  // reverse_, after phase 1
  std::unique_ptr<ThresholdWalk> walker_;              // walk_, after phase 1
  LargeArray<float> z_;  // v x Q: sqrt of the row-wise minima (lazy_: of the least lower bounds);
                         // reverse_: -B2 terms (see phase1)
  LargeArray<cpu::KeptLeast> least_;                   // lazy_: v x Q
  mutable std::atomic<std::size_t> refined_words_{0};  // lazy_: distances refine() recomputed
  const std::uint64_t generation_ = ++generations;     // tells a batch's memos from another's
  std::vector<float> nn_sum_;                          // per query: sum_t F_t nn(t)
  Phase1Counts counts_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_lc_rwmd(const Index& index, QueryRange queries,
                                            Direction direction, const Phase1& phase1,
                                            std::size_t cache_budget, Rows rows, bool walk) {
  return std::make_unique<LcRwmd>(index, queries, direction, phase1, cache_budget, rows, walk);
}

namespace {
// The same relaxation as quadratic RWMD: the same values, explained alike.
constexpr MethodImpl kLcRwmdImpl{
    .cpu = {.make =
                [](const MethodContext& c) {
                  return make_lc_rwmd(c.index, c.queries, c.options.direction, *c.phase1,
                                      c.cache_budget, c.rows, c.options.prune);
                },
            .word_pass = WordPass::nearest,
            .caches_word_distances = true,
            .bounds_rows = true},
    .gpu = GpuPass::nearest,
    .explain = explain_rwmd};
}  // namespace

extern constinit const MethodInfo kLcRwmdMethod{
    .name = "lc-rwmd",
    .summary =
        "linear-complexity RWMD (Atasu et al. 2017): rwmd's values, each vocabulary word's "
        "nearest query word found once per query; the default for documents as queries",
    .document_to_query = true,
    .query_to_document = true,
    .bounded = true,
    .default_for = QueryKind::document,
    .impl = &kLcRwmdImpl};

std::size_t lc_rwmd_pair_bytes(Rows rows) {
  return sizeof(float) + (rows == Rows::bounds ? sizeof(cpu::KeptLeast) : 0);
}

}  // namespace lcrwmd
