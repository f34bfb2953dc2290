// Linear-complexity RWMD (Atasu et al. 2017) on the CPU.
//
// Phase 1: squared distances between every vocabulary word and every distinct query word of
//   the batch, one GEMM per tile (||e||^2 + ||t||^2 - 2 e.t), then for each query the minimum
//   over its own words: Z[u, j] = min_{w in q_j} c(u, w).
// Phase 2: D1 = X1 . Z (CSR times dense): D1[i, j] = R(doc_i -> q_j) for every document.
// D2[i, j] = R(q_j -> doc_i) reuses the phase-1 distances (kept when the memory budget allows)
//   as a gather-min over the document's words, so no second GEMM is needed; the search driver
//   asks for it only where the lower bound does not already rule the document out.
// The lower bound handed to the driver is max(D1, B2), with B2 a bound on D2 computed in the
//   same sparse pass: a query word the document lacks is at least as far from every document
//   word as from its nearest other vocabulary word, nn(t) (a by-product of phase 1), so
//   D2 >= B2 = sum_t F_t nn(t) - sum_{t in doc} F_t nn(t). With D1 alone as the bound, ~7x
//   more documents need D2 on the Set-1 shape.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/numerics.h"
#include "cpu/simd.h"
#include "methods/batch_distance.h"
#include "methods/batch_words.h"
#include "util/large_array.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using numerics::kB2Slack;
constexpr std::size_t kPrefetchAhead = 4;
constexpr std::size_t kPrefetchBytes = 1024;

class LcRwmd final : public BatchDistance {
 public:
  LcRwmd(const Index& index, QueryRange q, bool symmetric, const CpuOptions& opt,
         std::size_t cache_budget)
      : index_(index), q_(q), symmetric_(symmetric), batch_(index, q.set, q.begin, q.end) {
    const BatchWords::TileShape tiles = batch_.tile_shape(opt);
    rows_ = tiles.rows;
    block_words_ = tiles.words;
    const std::size_t v = index.vocab_size();
    keep_distances_ = symmetric_ && v * batch_.cols.size() * sizeof(float) <= cache_budget;
    if (keep_distances_) {
      by_column_.resize(batch_.cols.size());
      for (std::size_t p = 0; p < batch_.cols.size(); ++p)
        by_column_[p] = static_cast<std::uint32_t>(p);
      std::stable_sort(by_column_.begin(), by_column_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return batch_.cols[a] < batch_.cols[b];
      });
    }
  }

  bool exact() const override { return !symmetric_; }

  void compute(float* out) override {
    phase1();
    phase2(out);
  }

  float refine(std::size_t j, std::size_t doc, float d1) const override {
    return std::max(d1, reverse_direction(j, doc));
  }

  bool sq_rows(std::size_t j, const std::uint32_t* words, std::size_t n,
               const float** rows) const override {
    if (!keep_distances_) return false;
    const std::uint64_t c0 = batch_.cols_indptr[j];
    for (std::size_t p = 0; p < n; ++p)
      rows[p] = dist_.data() + std::size_t{words[p]} * batch_.cols.size() + c0;
    return true;
  }

  const float* sq_distance_row(std::size_t u) const override {
    return keep_distances_ ? dist_.data() + u * batch_.cols.size() : nullptr;
  }

 private:
  std::size_t nq() const { return q_.size(); }

  void phase1() {
    const std::size_t v = index_.vocab_size(), w = batch_.words.size(), Q = nq();
    z_.resize(v * Q);  // every entry is written below, tile by tile
    if (keep_distances_) dist_.resize(v * batch_.cols.size());
    std::vector<float> nearest(w, kInf);  // squared distance to the nearest other word
    const std::size_t n_tiles = (v + rows_ - 1) / rows_;
    const cpu::Kernels& k = cpu::kernels();
#pragma omp parallel
    {
      std::vector<float> scratch(block_words_ * rows_);
      std::vector<float> zmin(Q * rows_);
      std::vector<float> my_nearest(symmetric_ ? w : 0, kInf);
      std::vector<std::size_t> cursor(Q);
#pragma omp for schedule(dynamic)
      for (std::size_t b = 0; b < n_tiles; ++b) {
        const std::size_t u0 = b * rows_, rows = std::min(rows_, v - u0);
        std::fill(zmin.begin(), zmin.end(), kInf);
        for (std::size_t j = 0; j < Q; ++j) cursor[j] = batch_.cols_indptr[j];
        for (std::size_t w0 = 0; w0 < w; w0 += block_words_) {
          const std::size_t wc = std::min(block_words_, w - w0);
          float* tile = scratch.data();
          batch_.tile_sq_distances(index_, u0, rows, w0, wc, tile);
          for (std::size_t j = 0; j < Q; ++j) {
            float* zj = zmin.data() + j * rows;
            std::size_t& p = cursor[j];
            for (; p < batch_.cols_indptr[j + 1] && batch_.cols[p] < w0 + wc; ++p)
              k.min_into(zj, tile + (batch_.cols[p] - w0) * rows, rows);
          }
          if (!symmetric_) continue;
          for (std::size_t c = 0; c < wc; ++c) {
            // Nearest *other* word: hide the word itself (at 0) for a branch-free minimum.
            float* col = tile + c * rows;
            const std::int64_t self = batch_.vocab_id[w0 + c] - static_cast<std::int64_t>(u0);
            const bool here = self >= 0 && self < static_cast<std::int64_t>(rows);
            if (here) col[self] = kInf;
            my_nearest[w0 + c] = k.min_of(col, rows, my_nearest[w0 + c]);
            if (here) col[self] = 0.0f;
          }
          if (keep_distances_) keep_for_reverse(u0, rows, w0, wc, tile);
        }
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t j = 0; j < Q; ++j) z_[(u0 + r) * Q + j] = std::sqrt(zmin[j * rows + r]);
      }
      if (symmetric_) {
#pragma omp critical
        for (std::size_t c = 0; c < w; ++c) nearest[c] = std::min(nearest[c], my_nearest[c]);
      }
    }
    if (!symmetric_) return;
    // B2 terms F_j(t) nn(t) ride in Z as negative numbers: Z[u, j] is exactly 0 for the
    // query's own words, so the sign tells them apart and one gather serves D1 and B2.
    nn_sum_.assign(Q, 0.0f);
    for (std::size_t j = 0; j < Q; ++j) {
      const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
      double total = 0;
      for (std::uint64_t p = batch_.cols_indptr[j]; p < batch_.cols_indptr[j + 1]; ++p) {
        const std::uint32_t c = batch_.cols[p];
        const float term = f[p - batch_.cols_indptr[j]] * std::sqrt(nearest[c]);
        total += term;
        if (batch_.vocab_id[c] >= 0)
          z_[static_cast<std::size_t>(batch_.vocab_id[c]) * Q + j] = -term;
      }
      nn_sum_[j] = static_cast<float>(total);
    }
  }

  // Copies a tile into the cache D2 reads: row u holds, query after query, the distances of u
  // to that query's words, so D2 of a pair reads one contiguous segment per document word.
  void keep_for_reverse(std::size_t u0, std::size_t rows, std::size_t w0, std::size_t wc,
                        const float* tile) {
    auto column_below = [&](std::uint32_t p, std::size_t c) { return batch_.cols[p] < c; };
    const auto first = std::lower_bound(by_column_.begin(), by_column_.end(), w0, column_below);
    const auto last = std::lower_bound(first, by_column_.end(), w0 + wc, column_below);
    const std::size_t stride = batch_.cols.size();
    // A transpose in blocks of 16 rows: the destination rows of a block stay in L1.
    constexpr std::size_t kBlock = 16;
    for (std::size_t r0 = 0; r0 < rows; r0 += kBlock) {
      const std::size_t rn = std::min(kBlock, rows - r0);
      float* dst = dist_.data() + (u0 + r0) * stride;
      for (auto it = first; it != last; ++it) {
        const float* src = tile + (batch_.cols[*it] - w0) * rows + r0;
        for (std::size_t r = 0; r < rn; ++r) dst[r * stride + *it] = src[r];
      }
    }
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
    if (Q == 1) {
#pragma omp parallel for schedule(static, 1024)
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t b = indptr[i], h = indptr[i + 1] - b;
        if (symmetric_) {
          const cpu::SplitDot d = k.sparse_dot_split(idx + b, val + b, h, z);
          out[i] = bound(d.dot, nn_sum_[0], d.negative);
        } else {
          out[i] = k.sparse_dot(idx + b, val + b, h, z);
        }
      }
      return;
    }
    constexpr std::size_t kDocs = 16;  // one cache line of each output row per block
    const std::size_t n_blocks = (n + kDocs - 1) / kDocs;
#pragma omp parallel
    {
      std::vector<float> acc(kDocs * Q), shared(symmetric_ ? kDocs * Q : 0);
#pragma omp for schedule(static)
      for (std::size_t blk = 0; blk < n_blocks; ++blk) {
        const std::size_t i0 = blk * kDocs, nd = std::min(kDocs, n - i0);
        std::fill(acc.begin(), acc.end(), 0.0f);
        std::fill(shared.begin(), shared.end(), 0.0f);
        k.sparse_times_dense(indptr + i0, idx, val, nd, z, Q, acc.data(),
                             symmetric_ ? shared.data() : nullptr);
        for (std::size_t j = 0; j < Q; ++j)
          for (std::size_t r = 0; r < nd; ++r)
            out[j * n + i0 + r] =
                symmetric_ ? bound(acc[r * Q + j], nn_sum_[j], shared[r * Q + j]) : acc[r * Q + j];
      }
    }
  }

  // D2 = R(q_j -> doc) = sum_t F_j[t] * min_{u in doc} c(u, w_t).
  float reverse_direction(std::size_t j, std::size_t doc) const {
    const std::size_t m = index_.dim();
    const std::uint64_t c0 = batch_.cols_indptr[j], h = batch_.cols_indptr[j + 1] - c0;
    const std::uint32_t* cols = batch_.cols.data() + c0;
    thread_local std::vector<float> best;
    best.assign(h, kInf);
    const auto indptr = index_.indptr();
    const std::size_t stride = batch_.cols.size();
    const cpu::Kernels& k = cpu::kernels();
    for (std::uint64_t p = indptr[doc]; p < indptr[doc + 1]; ++p) {
      const std::size_t u = index_.indices()[p];
      if (keep_distances_) {
        // Rows are scattered over memory: fetch a few document words ahead.
        if (p + kPrefetchAhead < indptr[doc + 1]) {
          const char* next = reinterpret_cast<const char*>(
              dist_.data() + std::size_t{index_.indices()[p + kPrefetchAhead]} * stride + c0);
          for (std::size_t b = 0; b < h * sizeof(float) && b < kPrefetchBytes; b += 64)
            __builtin_prefetch(next + b);
        }
        k.min_into(best.data(), dist_.data() + u * stride + c0, h);
      } else {
        const float* e = index_.vector(u);
        for (std::size_t t = 0; t < h; ++t)
          best[t] = std::min(best[t], k.sq_dist(e, batch_.vectors.data() + cols[t] * m, m));
      }
    }
    const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
    float s = 0;
    for (std::size_t t = 0; t < h; ++t) s += f[t] * std::sqrt(best[t]);
    return s;
  }

  const Index& index_;
  QueryRange q_;
  bool symmetric_;
  std::size_t rows_ = 0, block_words_ = 0;
  BatchWords batch_;     // the batch's distinct words (phase-1 columns) and each query's columns
  LargeArray<float> z_;  // v x Q: sqrt of the row-wise minima; symmetric: -B2 terms (see phase1)
  std::vector<float> nn_sum_;  // per query: sum_t F_t nn(t)
  bool keep_distances_ = false;
  LargeArray<float> dist_;  // v x batch_.cols.size(): squared distances, see keep_for_reverse()
  std::vector<std::uint32_t> by_column_;  // positions in batch_.cols, ordered by column
};

}  // namespace

std::unique_ptr<BatchDistance> make_lc_rwmd(const Index& index, QueryRange queries, bool symmetric,
                                            const CpuOptions& options, std::size_t cache_budget) {
  return std::make_unique<LcRwmd>(index, queries, symmetric, options, cache_budget);
}

}  // namespace lcrwmd
