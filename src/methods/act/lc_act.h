#pragma once
// Linear-complexity ACT-k and ICT (Atasu & Mittelholzer 2019) on the CPU, one-sided: the LC-RWMD
// structure with each query's k+1 nearest words per vocabulary word instead of the nearest
// alone (ICT: all of them, in order).
//
// Phase 1: for every vocabulary word u and query j, the k+1 smallest distances to j's words
//   with those words' weights, ascending: from the batch's GEMM tiles (as LC-RWMD's), or from
//   symmetric LC-RWMD's cached distances where the symmetric method already holds them.
// Phase 2 (document -> query): per document and query, each word u of weight p sends p to
//   those words in ascending order, at most a word's weight for k steps, the rest at the
//   (k+1)-th nearest (the last one where the query has fewer words): ACT-0 is LC-RWMD's D1.
// Symmetric ACT (reverse_act.cpp) raises symmetric LC-RWMD's bound with it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/batch_words.h"
#include "cpu/simd.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/certified_order.h"
#include "methods/lc_rwmd/phase1.h"
#include "methods/lc_rwmd/word_distance_cache.h"
#include "methods/pair_distances.h"
#include "util/large_array.h"

namespace lcrwmd {
namespace act {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// One of a query's nearest words to a vocabulary word: its cost (squared until phase 1 ends)
// and its weight in the query.
struct Slot {
  float cost, mass;
};

class LcAct final : public BatchDistance {
 public:
  // cache: symmetric LC-RWMD's word distances over the same batch, which phase 1 reads instead
  // of its own GEMM tiles (the symmetric method has computed them already).
  LcAct(const Index& index, QueryRange q, std::size_t steps, const Phase1& p1,
        const WordDistanceCache* cache = nullptr)
      : index_(index),
        q_(q),
        steps_(steps),
        cache_(cache),
        batch_(index, q.set, q.begin, q.end),
        tiles_(index, p1, batch_) {
    // Each query keeps as many of its words as a transfer reaches; where that is every word,
    // phase 1 keeps them all, ordered as far as a transfer goes (keeps_all).
    begin_.push_back(0);
    for (std::size_t j = 0; j < nq(); ++j)
      begin_.push_back(begin_.back() + reachable_words(steps_, q.set.length(q.begin + j)));
  }

  bool exact() const override { return true; }

  void compute(float* out) override {
    phase1();
    phase2(out, false);
  }

  // out = max(out, D1): symmetric ACT's bound on top of LC-RWMD's.
  void raise(float* out) {
    phase1();
    phase2(out, true);
  }

  Phase1Counts phase1_counts() const override { return counts_; }

 private:
  std::size_t nq() const { return q_.size(); }
  std::size_t stride() const { return begin_.back(); }
  std::size_t slots_of(std::size_t j) const { return begin_[j + 1] - begin_[j]; }
  std::size_t words_of(std::size_t j) const {
    return batch_.cols_indptr[j + 1] - batch_.cols_indptr[j];
  }
  bool keeps_all(std::size_t j) const { return slots_of(j) == words_of(j); }

  // Offers a word at squared distance d, of weight f, to the K ascending slots of seg; a word
  // offered later goes after equal ones (words come in ascending position).
  static void insert(Slot* seg, std::size_t K, float d, float f) {
    if (!(d < seg[K - 1].cost)) return;
    for (; K > 1 && d < seg[K - 2].cost; --K) seg[K - 1] = seg[K - 2];
    seg[K - 1] = {d, f};
  }

  // Query j's slots of a vocabulary word from its certified order (certified_order.h): the
  // ordered words, then, where all are kept, the others in position order at the last ordered
  // one's cost (what rounding might still send there costs no more than that word does).
  void fill(Slot* seg, std::size_t j, const std::vector<Ranked>& order) const {
    const float* f = query_weights(j);
    std::size_t s = 0;
    for (const Ranked& r : order) seg[s++] = {r.d, f[r.t]};
    if (!keeps_all(j)) return;
    thread_local std::vector<char> ordered;
    ordered.assign(words_of(j), 0);
    for (const Ranked& r : order) ordered[r.t] = 1;
    for (std::size_t t = 0; t < words_of(j); ++t)
      if (!ordered[t]) seg[s++] = {order.back().d, f[t]};
  }

  static void finish(Slot* row, std::size_t n) {
    for (std::size_t s = 0; s < n; ++s) row[s].cost = std::sqrt(row[s].cost);
  }

  // Where some query keeps all its words: each vocabulary word's largest weight in a document.
  void find_max_weights() {
    bool needed = false;
    for (std::size_t j = 0; j < nq(); ++j) needed |= keeps_all(j);
    if (needed && max_weight_.empty()) max_weight_ = largest_word_weights(index_);
  }
  float reach(std::size_t u) const { return max_weight_.empty() ? 0.0f : max_weight_[u]; }

  const float* query_weights(std::size_t j) const {
    return q_.set.weights.data() + q_.set.indptr[q_.begin + j];
  }

  void phase1() {
    const std::size_t v = index_.vocab_size(), S = stride();
    slots_.resize(v * S);
    find_max_weights();
    if (cache_) {
      phase1_from_cache();
      return;
    }
    const std::size_t w = batch_.words.size(), Q = nq(), R = tiles_.rows();
    const std::size_t block = tiles_.block_words();
    std::size_t recomputed = 0;
#pragma omp parallel reduction(+ : recomputed)
    {
      Phase1Tiles::Workspace ws(tiles_, tiles_.rows());
      std::vector<Slot> upper(R * S);  // the K smallest upper bounds (mass unused)
      std::vector<float> limit(R);
      std::vector<std::size_t> cursor(Q);
      std::vector<std::uint32_t> found;
      std::vector<Ranked> order, scratch;
#pragma omp for schedule(dynamic)
      for (std::size_t b = 0; b < tiles_.n_tiles(); ++b) {
        const std::size_t u0 = tiles_.first_row(b), rows = tiles_.rows_in(b);
        Slot* mine = slots_.data() + u0 * S;
        std::fill(mine, mine + rows * S, Slot{kInf, 0.0f});
        std::fill(upper.begin(), upper.end(), Slot{kInf, 0.0f});
        for (std::size_t j = 0; j < Q; ++j) cursor[j] = batch_.cols_indptr[j];
        for (std::size_t w0 = 0; w0 < w; w0 += block) {
          const std::size_t wc = std::min(block, w - w0);
          tiles_.bound(ws, u0, rows, w0, wc, true);
          for (std::size_t j = 0; j < Q; ++j) {
            std::size_t& p = cursor[j];
            for (; p < batch_.cols_indptr[j + 1] && batch_.cols[p] < w0 + wc; ++p) {
              if (keeps_all(j)) continue;
              const float* hi = ws.hi_column(batch_.cols[p] - w0);
              for (std::size_t r = 0; r < rows; ++r)
                insert(upper.data() + r * S + begin_[j], slots_of(j), hi[r], 0.0f);
            }
          }
        }
        for (std::size_t j = 0; j < Q; ++j) {
          const std::uint64_t c0 = batch_.cols_indptr[j];
          const std::uint32_t* cols = batch_.cols.data() + c0;
          const float* f = query_weights(j);
          if (keeps_all(j)) {
            for (std::size_t r = 0; r < rows; ++r) {
              const std::size_t u = u0 + r;
              const auto lo = [&](std::size_t t) { return ws.lo_column(cols[t])[r]; };
              recomputed += certified_nearest(
                  words_of(j), words_of(j), reach(u), lo,
                  [&](std::size_t t) { return lo(t) + 2.0f * tiles_.half_width(u, cols[t]); },
                  [&](std::size_t t) { return f[t]; },
                  [&](std::size_t t) { return tiles_.exact(u, cols[t]); }, order, scratch);
              fill(mine + r * S + begin_[j], j, order);
            }
            continue;
          }
          // The K-th smallest upper bound limits the K nearest; the words under it, in
          // ascending position, offered exactly.
          const std::size_t K = slots_of(j);
          for (std::size_t r = 0; r < rows; ++r) limit[r] = upper[r * S + begin_[j] + K - 1].cost;
          found.resize(rows);
          for (std::size_t t = 0; t < words_of(j); ++t) {
            const std::size_t n = cpu::kernels().select_at_most(ws.lo_column(cols[t]), limit.data(),
                                                                rows, found.data());
            for (std::size_t i = 0; i < n; ++i) {
              const std::uint32_t r = found[i];
              insert(mine + r * S + begin_[j], K, tiles_.exact(u0 + r, cols[t]), f[t]);
            }
            recomputed += n;
          }
        }
        for (std::size_t r = 0; r < rows; ++r) finish(mine + r * S, S);
      }
    }
    counts_ = {v * Q, recomputed};
  }

  // From symmetric LC-RWMD's cache: a vocabulary word's lower bounds to every query's words
  // are one row.
  void phase1_from_cache() {
    const std::size_t v = index_.vocab_size(), S = stride(), Q = nq();
    std::size_t recomputed = 0;
#pragma omp parallel reduction(+ : recomputed)
    {
      std::vector<Ranked> order, scratch;
#pragma omp for schedule(static, 256)
      for (std::size_t u = 0; u < v; ++u) {
        Slot* row = slots_.data() + u * S;
        for (std::size_t j = 0; j < Q; ++j) {
          const float* lo = cache_->row(u) + batch_.cols_indptr[j];
          const float* f = query_weights(j);
          recomputed += certified_nearest(
              words_of(j), slots_of(j), reach(u), [&](std::size_t t) { return lo[t]; },
              [&](std::size_t t) { return cache_->upper(u, j, t, lo[t]); },
              [&](std::size_t t) { return f[t]; },
              [&](std::size_t t) { return cache_->exact(u, j, t); }, order, scratch);
          fill(row + begin_[j], j, order);
        }
        finish(row, S);
      }
    }
    counts_ = {v * Q, recomputed};
  }

  // What mass p of one word costs: capped steps while more than one reachable word is left,
  // the rest at the last reachable one. (ACT-0 and ACT-1 branch-free, with the same bits.)
  static float transfer(float p, const Slot* seg, std::size_t reachable) {
    if (reachable == 0) return p * kInf;  // a query with no words: nowhere to go
    if (reachable == 1) return p * seg[0].cost;
    if (reachable == 2) {
      const float moved = std::min(p, seg[0].mass);
      return moved * seg[0].cost + (p - moved) * seg[1].cost;
    }
    float total = 0, left = p;
    std::size_t s = 0;
    for (; s + 1 < reachable && left > 0; ++s) {
      const float moved = std::min(left, seg[s].mass);
      total += moved * seg[s].cost;
      left -= moved;
    }
    return left > 0 ? total + left * seg[s].cost : total;
  }

  void phase2(float* out, bool keep_larger) const {
    const std::size_t n = index_.n_docs(), Q = nq(), S = stride();
    const auto indptr = index_.indptr();
    const auto idx = index_.indices();
    const auto val = index_.values();
    const Slot* slots = slots_.data();
    static_assert(sizeof(Slot) == 2 * sizeof(float));
    const cpu::Kernels& k = cpu::kernels();
    const auto* flat = reinterpret_cast<const float*>(slots);
    // Two slots for every query (ACT-1, or ICT's two-word queries): the vectorised ACT-1 sums.
    // (S == 2 Q alone does not say it: ICT's queries of one and three words have it too.)
    bool two_each = true;
    for (std::size_t j = 0; j < Q; ++j) two_each &= slots_of(j) == 2;
    if (Q == 1 && two_each) {
      // One query, ACT-1: eight words at a time (cpu/simd.h).
#pragma omp parallel for schedule(static, 1024)
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t b = indptr[i];
        const float d = k.act1_dot(idx.data() + b, val.data() + b, indptr[i + 1] - b, flat);
        out[i] = keep_larger ? std::max(out[i], d) : d;
      }
      return;
    }
#pragma omp parallel
    {
      std::vector<float> acc(Q), lanes(cpu::kSumLanes * Q);
      // Query by query inside each nonzero: a vocabulary word's slots for the whole batch are
      // one contiguous row. Each query's sum in act1_dot's order (cpu::kSumLanes).
#pragma omp for schedule(dynamic, 256)
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t b = indptr[i], h = indptr[i + 1] - b;
        if (two_each) {  // vectorised across the queries
          k.act1_rows(idx.data() + b, val.data() + b, h, flat, Q, acc.data(), lanes.data());
        } else {
          std::fill(lanes.begin(), lanes.end(), 0.0f);
          std::fill(acc.begin(), acc.end(), 0.0f);
          const std::uint64_t h8 = h / cpu::kSumLanes * cpu::kSumLanes;
          for (std::uint64_t p = 0; p < h; ++p) {
            float* sum = p < h8 ? lanes.data() + (p % cpu::kSumLanes) * Q : acc.data();
            const Slot* row = slots + std::size_t{idx[b + p]} * S;
            for (std::size_t j = 0; j < Q; ++j)
              sum[j] += transfer(val[b + p], row + begin_[j], begin_[j + 1] - begin_[j]);
          }
          for (std::size_t j = 0; j < Q; ++j)
            acc[j] = cpu::combine_lanes(lanes.data() + j, Q) + acc[j];
        }
        for (std::size_t j = 0; j < Q; ++j) {
          float& o = out[j * n + i];
          o = keep_larger ? std::max(o, acc[j]) : acc[j];
        }
      }
    }
  }

  const Index& index_;
  QueryRange q_;
  std::size_t steps_;
  const WordDistanceCache* cache_;
  BatchWords batch_;
  Phase1Tiles tiles_;
  std::vector<std::size_t>
      begin_;                      // query j's slots of a vocabulary word: [begin_[j], begin_[j+1])
  LargeArray<Slot> slots_;         // v x stride(): per vocabulary word, query after query
  std::vector<float> max_weight_;  // per vocabulary word, its largest weight in a document
                                   // (only where some query keeps all its words)
  Phase1Counts counts_;
};

}  // namespace act
}  // namespace lcrwmd
