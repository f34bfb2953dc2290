// Linear-complexity ACT-k and ICT (Atasu & Mittelholzer 2019) on the CPU: the LC-RWMD
// structure with each query's k+1 nearest words per vocabulary word instead of the nearest
// alone (ICT: all of them, in order).
//
// Phase 1: for every vocabulary word u and query j, the k+1 smallest distances to j's words
//   with those words' weights, ascending: from the batch's GEMM tiles (as LC-RWMD's), or from
//   symmetric LC-RWMD's cached distances where the symmetric method already holds them.
// Phase 2 (document -> query): per document and query, each word u of weight p sends p to
//   those words in ascending order, at most a word's weight for k steps, the rest at the
//   (k+1)-th nearest (the last one where the query has fewer words): ACT-0 is LC-RWMD's D1.
// Symmetric: max(D1, D2) with D2 (query -> document) per pair, from the cached distances,
//   only where the bounds before it do not rule the document out.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/simd.h"
#include "methods/batch_distance.h"
#include "methods/batch_words.h"
#include "util/large_array.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Where a query's words are all kept (ICT), the first slots sorted at once; then doubling.
constexpr std::size_t kFirstSorted = 8;

// One of a query's nearest words to a vocabulary word: its cost (squared until phase 1 ends)
// and its weight in the query.
struct Slot {
  float cost, mass;
};

class LcAct final : public BatchDistance {
 public:
  // cached: symmetric LC-RWMD over the same batch, whose sq_distance_row() phase 1 reads
  // instead of its own GEMM tiles once that method has computed (where it kept them).
  LcAct(const Index& index, QueryRange q, std::size_t steps, const CpuOptions& opt,
        const BatchDistance* cached = nullptr)
      : index_(index), q_(q), steps_(steps), cached_(cached), batch_(index, q.set, q.begin, q.end) {
    const BatchWords::TileShape tiles = batch_.tile_shape(opt);
    rows_ = tiles.rows;
    block_words_ = tiles.words;
    // Each query keeps as many of its words as a transfer reaches; where that is every word,
    // phase 1 keeps them all and sorts them (keeps_all).
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

 private:
  std::size_t nq() const { return q_.size(); }
  std::size_t stride() const { return begin_.back(); }

  bool keeps_all(std::size_t j) const {
    return begin_[j + 1] - begin_[j] == batch_.cols_indptr[j + 1] - batch_.cols_indptr[j];
  }

  // Offers a word at squared distance d, of weight f, to the K ascending slots of seg.
  static void insert(Slot* seg, std::size_t K, float d, float f) {
    if (!(d < seg[K - 1].cost)) return;
    for (; K > 1 && d < seg[K - 2].cost; --K) seg[K - 1] = seg[K - 2];
    seg[K - 1] = {d, f};
  }

  // Offers all of query j's words, at squared distances d[t], to u's slots (`row`).
  void offer_row(Slot* row, std::size_t j, const float* d) const {
    Slot* seg = row + begin_[j];
    const float* f = query_weights(j);
    const std::size_t h = batch_.cols_indptr[j + 1] - batch_.cols_indptr[j];
    if (keeps_all(j)) {
      for (std::size_t t = 0; t < h; ++t) seg[t] = {d[t], f[t]};
      return;
    }
    const std::size_t K = begin_[j + 1] - begin_[j];
    for (std::size_t t = 0; t < h; ++t) insert(seg, K, d[t], f[t]);
  }

  // Offers query j's word t, at squared distances col[r], to consecutive vocabulary words'
  // slots (rows[r * stride()]).
  void offer_column(Slot* rows, std::size_t n_rows, std::size_t j, std::size_t t,
                    const float* col) const {
    const std::size_t S = stride(), K = begin_[j + 1] - begin_[j];
    const float f = query_weights(j)[t];
    Slot* seg = rows + begin_[j];
    if (keeps_all(j)) {
      for (std::size_t r = 0; r < n_rows; ++r) seg[r * S + t] = {col[r], f};
      return;
    }
    for (std::size_t r = 0; r < n_rows; ++r) insert(seg + r * S, K, col[r], f);
  }

  // After every word was offered: ascending order where all were kept, and distances. There
  // the order matters only as far as a transfer of u's largest weight in any document reaches:
  // the prefix whose capacities hold that mass, and one slot more for what rounding leaves.
  void finish(Slot* row, std::size_t u) const {
    const auto ascending = [](const Slot& a, const Slot& b) { return a.cost < b.cost; };
    for (std::size_t j = 0; j < nq(); ++j) {
      Slot* seg = row + begin_[j];
      Slot* end = row + begin_[j + 1];
      if (keeps_all(j)) {
        float held = 0;
        Slot* sorted = seg;
        for (std::size_t chunk = kFirstSorted; sorted != end && held < max_weight_[u]; chunk *= 2) {
          Slot* next =
              sorted + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(chunk), end - sorted);
          std::partial_sort(sorted, next, end, ascending);
          for (; sorted != next && held < max_weight_[u]; ++sorted) held += sorted->mass;
        }
        if (sorted != end) std::partial_sort(sorted, sorted + 1, end, ascending);
      }
      for (; seg != end; ++seg) seg->cost = std::sqrt(seg->cost);
    }
  }

  // Where some query keeps all its words: each vocabulary word's largest weight in a document.
  void find_max_weights() {
    bool needed = false;
    for (std::size_t j = 0; j < nq(); ++j) needed |= keeps_all(j);
    if (needed && max_weight_.empty()) max_weight_ = largest_word_weights(index_);
  }

  const float* query_weights(std::size_t j) const {
    return q_.set.weights.data() + q_.set.indptr[q_.begin + j];
  }

  void phase1() {
    const std::size_t v = index_.vocab_size(), S = stride();
    slots_.resize(v * S);
    find_max_weights();
    if (cached_ && cached_->sq_distance_row(0)) {
      phase1_from_cache();
      return;
    }
    const std::size_t w = batch_.words.size(), Q = nq();
    const std::size_t n_tiles = (v + rows_ - 1) / rows_;
#pragma omp parallel
    {
      std::vector<float> tile(block_words_ * rows_);
      std::vector<std::size_t> cursor(Q);
#pragma omp for schedule(dynamic)
      for (std::size_t b = 0; b < n_tiles; ++b) {
        const std::size_t u0 = b * rows_, rows = std::min(rows_, v - u0);
        Slot* mine = slots_.data() + u0 * S;
        std::fill(mine, mine + rows * S, Slot{kInf, 0.0f});
        for (std::size_t j = 0; j < Q; ++j) cursor[j] = batch_.cols_indptr[j];
        for (std::size_t w0 = 0; w0 < w; w0 += block_words_) {
          const std::size_t wc = std::min(block_words_, w - w0);
          batch_.tile_sq_distances(index_, u0, rows, w0, wc, tile.data());
          for (std::size_t j = 0; j < Q; ++j) {
            const std::size_t c0 = batch_.cols_indptr[j];
            std::size_t& p = cursor[j];
            for (; p < batch_.cols_indptr[j + 1] && batch_.cols[p] < w0 + wc; ++p)
              offer_column(mine, rows, j, p - c0, tile.data() + (batch_.cols[p] - w0) * rows);
          }
        }
        for (std::size_t r = 0; r < rows; ++r) finish(mine + r * S, u0 + r);
      }
    }
  }

  // The cached row of u holds its distance to every query word in BatchWords::cols order.
  void phase1_from_cache() {
    const std::size_t v = index_.vocab_size(), S = stride(), Q = nq();
#pragma omp parallel for schedule(static, 256)
    for (std::size_t u = 0; u < v; ++u) {
      Slot* row = slots_.data() + u * S;
      std::fill(row, row + S, Slot{kInf, 0.0f});
      const float* d = cached_->sq_distance_row(u);
      for (std::size_t j = 0; j < Q; ++j) offer_row(row, j, d + batch_.cols_indptr[j]);
      finish(row, u);
    }
  }

  // What mass p of one word costs: capped steps while more than one reachable word is left,
  // the rest at the last reachable one. (ACT-0 and ACT-1 branch-free, with the same bits.)
  static float transfer(float p, const Slot* seg, std::size_t reachable) {
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
    if (Q == 1 && S == 2) {
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
      std::vector<float> acc(Q);
      // Query by query inside each nonzero: a vocabulary word's slots for the whole batch are
      // one contiguous row.
#pragma omp for schedule(dynamic, 256)
      for (std::size_t i = 0; i < n; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        if (S == 2 * Q) {  // ACT-1 for every query: vectorised across the queries
          const std::uint64_t b = indptr[i];
          k.act1_rows(idx.data() + b, val.data() + b, indptr[i + 1] - b, flat, Q, acc.data());
        } else {
          for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
            const Slot* row = slots + std::size_t{idx[p]} * S;
            for (std::size_t j = 0; j < Q; ++j)
              acc[j] += transfer(val[p], row + begin_[j], begin_[j + 1] - begin_[j]);
          }
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
  const BatchDistance* cached_;
  std::size_t rows_ = 0, block_words_ = 0;
  BatchWords batch_;
  std::vector<std::size_t>
      begin_;                      // query j's slots of a vocabulary word: [begin_[j], begin_[j+1])
  LargeArray<Slot> slots_;         // v x stride(): per vocabulary word, query after query
  std::vector<float> max_weight_;  // per vocabulary word, its largest weight in a document
                                   // (only where some query keeps all its words)
};

// Symmetric: max(D1, D2). The bound is max(symmetric LC-RWMD's bound, ACT's D1), both for
// every document at once and phase 1 computed once; the pair's RWMD (D2 from the cache) is the
// cheap step before ACT's D2, which reads the same cache (or, without it, the vectors).
class SymmetricAct final : public BatchDistance {
 public:
  SymmetricAct(const Index& index, QueryRange q, std::size_t steps, const CpuOptions& opt,
               std::size_t cache_budget)
      : index_(index),
        q_(q),
        steps_(steps),
        rwmd_(make_lc_rwmd(index, q, true, opt, cache_budget)),
        d1_(index, q, steps, opt, rwmd_.get()) {}

  bool exact() const override { return false; }

  void compute(float* out) override {
    rwmd_->compute(out);
    d1_.raise(out);
  }

  std::size_t tighten_levels() const override { return 1; }
  float tighten(std::size_t j, std::size_t doc, float lower, std::size_t) const override {
    return rwmd_->refine(j, doc, lower);
  }

  float refine(std::size_t j, std::size_t doc, float lower) const override {
    const std::size_t q = q_.begin + j;
    const std::uint64_t db = index_.indptr()[doc], dh = index_.indptr()[doc + 1] - db;
    const std::size_t qh = q_.set.length(q);
    thread_local std::vector<const float*> sq;
    sq.resize(dh);
    const double d2 = rwmd_->pair_sq_rows(index_, j, doc, sq.data())
                          ? act_from_sq_distances(sq.data(), dh, qh, index_.values().data() + db,
                                                  q_.set.weights.data() + q_.set.indptr[q], steps_,
                                                  ActDirection::query_to_doc)
                          : act_query_to_doc(index_, doc, q_.set, q, steps_);
    return std::max(lower, static_cast<float>(d2));
  }

 private:
  const Index& index_;
  QueryRange q_;
  std::size_t steps_;
  std::unique_ptr<BatchDistance> rwmd_;
  LcAct d1_;
};

}  // namespace

std::vector<float> largest_word_weights(const Index& index) {
  const std::size_t v = index.vocab_size(), n = index.n_docs();
  const auto indptr = index.indptr();
  const auto idx = index.indices();
  const auto val = index.values();
  std::vector<float> largest(v, 0.0f);
#pragma omp parallel
  {
    std::vector<float> mine(v, 0.0f);
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p)
        mine[idx[p]] = std::max(mine[idx[p]], val[p]);
#pragma omp critical
    for (std::size_t u = 0; u < v; ++u) largest[u] = std::max(largest[u], mine[u]);
  }
  return largest;
}

std::unique_ptr<BatchDistance> make_lc_act(const Index& index, QueryRange queries,
                                           std::size_t steps, const CpuOptions& options) {
  return std::make_unique<LcAct>(index, queries, steps, options);
}

std::unique_ptr<BatchDistance> make_act(const Index& index, QueryRange queries, bool symmetric,
                                        std::size_t steps, const CpuOptions& options,
                                        std::size_t cache_budget) {
  if (!symmetric) return make_lc_act(index, queries, steps, options);
  return std::make_unique<SymmetricAct>(index, queries, steps, options, cache_budget);
}

}  // namespace lcrwmd
