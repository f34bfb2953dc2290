// Linear-complexity ACT-k (Atasu & Mittelholzer 2019), one direction (document -> query), on
// the CPU: the LC-RWMD structure with k+1 nearest query words per vocabulary word instead of
// the nearest alone.
//
// Phase 1: per tile of vocabulary rows, the batch's squared distances (the same GEMM tiles as
//   LC-RWMD), and for every row u and query j the k+1 smallest with their query words' weights.
// Phase 2: per document and query, each word u of weight p sends p to those words in ascending
//   order, at most a word's weight for k steps, the rest at the (k+1)-th nearest (the last
//   one where the query has fewer words): ACT-0 is LC-RWMD's D1.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "methods/batch_distance.h"
#include "methods/batch_words.h"
#include "util/large_array.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class LcAct final : public BatchDistance {
 public:
  LcAct(const Index& index, QueryRange q, std::size_t steps, const CpuOptions& opt)
      : index_(index),
        q_(q),
        steps_(steps),
        slots_(steps + 1),
        batch_(index, q.set, q.begin, q.end) {
    const BatchWords::TileShape tiles = batch_.tile_shape(opt);
    rows_ = tiles.rows;
    block_words_ = tiles.words;
  }

  bool exact() const override { return true; }

  void compute(float* out) override {
    phase1();
    phase2(out);
  }

 private:
  std::size_t nq() const { return q_.size(); }

  // Slot s of (vocabulary word u, query j): the s-th nearest word's cost (sqrt) and weight.
  std::size_t slot(std::size_t u, std::size_t j) const { return (u * nq() + j) * slots_; }

  void phase1() {
    const std::size_t v = index_.vocab_size(), w = batch_.words.size(), Q = nq(), K = slots_;
    cost_.resize(v * Q * K);
    mass_.resize(v * Q * K);
    const std::size_t n_tiles = (v + rows_ - 1) / rows_;
#pragma omp parallel
    {
      std::vector<float> tile(block_words_ * rows_);
      std::vector<float> best(rows_ * Q * K), weight(rows_ * Q * K);
      std::vector<std::size_t> cursor(Q);
#pragma omp for schedule(dynamic)
      for (std::size_t b = 0; b < n_tiles; ++b) {
        const std::size_t u0 = b * rows_, rows = std::min(rows_, v - u0);
        std::fill(best.begin(), best.end(), kInf);
        std::fill(weight.begin(), weight.end(), 0.0f);
        for (std::size_t j = 0; j < Q; ++j) cursor[j] = batch_.cols_indptr[j];
        for (std::size_t w0 = 0; w0 < w; w0 += block_words_) {
          const std::size_t wc = std::min(block_words_, w - w0);
          batch_.tile_sq_distances(index_, u0, rows, w0, wc, tile.data());
          for (std::size_t j = 0; j < Q; ++j) {
            const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
            std::size_t& p = cursor[j];
            for (; p < batch_.cols_indptr[j + 1] && batch_.cols[p] < w0 + wc; ++p) {
              const float* col = tile.data() + (batch_.cols[p] - w0) * rows;
              const float fw = f[p - batch_.cols_indptr[j]];
              for (std::size_t r = 0; r < rows; ++r)
                keep(col[r], fw, &best[(r * Q + j) * K], &weight[(r * Q + j) * K]);
            }
          }
        }
        for (std::size_t e = 0; e < rows * Q * K; ++e) {
          cost_[u0 * Q * K + e] = std::sqrt(best[e]);  // inf where the query has fewer words
          mass_[u0 * Q * K + e] = weight[e];
        }
      }
    }
  }

  // Inserts (d, f) into the K ascending smallest of best/weight.
  void keep(float d, float f, float* best, float* weight) const {
    std::size_t s = slots_;
    if (!(d < best[s - 1])) return;
    while (s > 1 && d < best[s - 2]) {
      best[s - 1] = best[s - 2];
      weight[s - 1] = weight[s - 2];
      --s;
    }
    best[s - 1] = d;
    weight[s - 1] = f;
  }

  // What mass p of one word costs: k capped steps, the rest at the next word's cost.
  float transfer(float p, const float* cost, const float* mass) const {
    float total = 0, left = p;
    std::size_t s = 0;
    for (; s < steps_ && s + 1 < slots_ && cost[s + 1] < kInf && left > 0; ++s) {
      const float moved = std::min(left, mass[s]);
      total += moved * cost[s];
      left -= moved;
    }
    return left > 0 ? total + left * cost[s] : total;
  }

  void phase2(float* out) const {
    const std::size_t n = index_.n_docs(), Q = nq();
    const auto indptr = index_.indptr();
    const auto idx = index_.indices();
    const auto val = index_.values();
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < Q; ++j) {
        float d = 0;
        for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
          const std::size_t at = slot(idx[p], j);
          d += transfer(val[p], cost_.data() + at, mass_.data() + at);
        }
        out[j * n + i] = d;
      }
  }

  const Index& index_;
  QueryRange q_;
  std::size_t steps_, slots_;
  std::size_t rows_ = 0, block_words_ = 0;
  BatchWords batch_;
  LargeArray<float> cost_, mass_;  // v x Q x (k+1), see slot()
};

// Symmetric: max(D1, D2). D1 for every document is the bound; D2 (query -> document) per pair
// from the vectors, for the documents the bound does not rule out.
class SymmetricAct final : public BatchDistance {
 public:
  SymmetricAct(const Index& index, QueryRange q, std::size_t steps, const CpuOptions& opt)
      : index_(index), q_(q), steps_(steps), d1_(index, q, steps, opt) {}

  bool exact() const override { return false; }
  void compute(float* out) override { d1_.compute(out); }
  float refine(std::size_t j, std::size_t doc, float d1) const override {
    return std::max(
        d1, static_cast<float>(act_query_to_doc(index_, doc, q_.set, q_.begin + j, steps_)));
  }

 private:
  const Index& index_;
  QueryRange q_;
  std::size_t steps_;
  LcAct d1_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_lc_act(const Index& index, QueryRange queries,
                                           std::size_t steps, const CpuOptions& options) {
  return std::make_unique<LcAct>(index, queries, steps, options);
}

std::unique_ptr<BatchDistance> make_act(const Index& index, QueryRange queries, bool symmetric,
                                        std::size_t steps, const CpuOptions& options) {
  if (!symmetric) return make_lc_act(index, queries, steps, options);
  return std::make_unique<SymmetricAct>(index, queries, steps, options);
}

}  // namespace lcrwmd
