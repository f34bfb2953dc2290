// Exact Word Mover's Distance (Kusner et al. 2015): the EMD between two documents' weights
// with Euclidean word costs. For top-k search it comes with lower bounds, each cheaper than the
// next step: symmetric LC-RWMD's bound and then a pricing bound (raise_bounds) for every
// document at once, two dual bounds of the pair's EMD (a quick and a close one, each a few
// passes over the cost matrix), then the EMD itself. (The pair's RWMD, once a step between,
// settled too few pairs to pay for itself: BENCHMARKS.md, "Exact WMD".)
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/numerics.h"
#include "cpu/distance_kernels.h"
#include "cpu/simd.h"
#include "lcrwmd/emd.h"
#include "lcrwmd/error.h"
#include "lcrwmd/topk.h"
#include "methods/batch_distance.h"
#include "methods/lc_rwmd/word_distance_cache.h"
#include "methods/method_impl.h"
#include "methods/pair_distances.h"
#include "ot/dual_bound.h"
#include "util/prefetch.h"

namespace lcrwmd {

namespace {

// Rows of word vectors in double, with their squared norms.
void gather_f64(const Index& index, const QuerySet* qs, const std::uint32_t* words, std::size_t h,
                std::vector<double>& vecs, std::vector<double>& norms) {
  const std::size_t m = index.dim();
  vecs.resize(h * m);
  norms.resize(h);
  for (std::size_t p = 0; p < h; ++p) {
    const float* v = qs ? query_word_vector(index, *qs, words[p]) : index.vector(words[p]);
    double s = 0;
    for (std::size_t d = 0; d < m; ++d) {
      vecs[p * m + d] = v[d];
      s += vecs[p * m + d] * vecs[p * m + d];
    }
    norms[p] = s;
  }
}

using numerics::kWmdCostRecomputeBelow;

// Rows of the word-distance cache are read this many ahead of their use: the pair problems'
// gathers and the pricing bound's pass wait on memory otherwise (BENCHMARKS.md, "Exact WMD").
constexpr std::size_t kRowsAhead = 8;

// One pair's transport problem in double: weights renormalised, Euclidean word costs, and the
// mass that both documents give the same word left in place. For a metric ground cost the EMD
// depends only on a - b (Kantorovich-Rubinstein), so removing the shared mass leaves a smaller
// problem with the same answer, scaled by the mass that remains.
struct PairProblem {
  std::vector<double> a, b, cost;
  double mass = 0;                      // 0: the same histogram
  std::vector<std::size_t> rows, cols;  // the document's and the query's words left in a, b
  std::vector<PairFlow> shared;         // mass left in place: a word in both, at cost 0
};

// Costs from the vectors in double, or from given float squared distances (a row per document
// word), computed only for the words left once the shared mass is in place.
const PairProblem& pair_problem(const Index& index, std::size_t doc, const QuerySet& qs,
                                std::size_t q, const float* const* sq_rows = nullptr) {
  const std::size_t m = index.dim();
  const auto indptr = index.indptr();
  const std::size_t db = indptr[doc], dh = indptr[doc + 1] - db;
  const std::size_t qb = qs.indptr[q], qh = qs.length(q);
  const std::uint32_t* dw = index.indices().data() + db;
  const std::uint32_t* qw = qs.words.data() + qb;
  thread_local std::vector<double> x, xn, y, yn, a, b;
  thread_local std::vector<std::uint32_t> row_words, col_words;
  thread_local PairProblem out;
  std::vector<std::size_t>& rows = out.rows;
  std::vector<std::size_t>& cols = out.cols;
  out.shared.clear();
  a.assign(index.values().begin() + static_cast<std::ptrdiff_t>(db),
           index.values().begin() + static_cast<std::ptrdiff_t>(db + dh));
  b.assign(qs.weights.begin() + static_cast<std::ptrdiff_t>(qb),
           qs.weights.begin() + static_cast<std::ptrdiff_t>(qb + qh));
  for (auto* w : {&a, &b}) {
    double total = 0;
    for (double v : *w) total += v;
    for (double& v : *w) v /= total;
  }
  // A word in both documents (both word lists ascending): its shared mass stays in place at
  // cost 0, and one side of it leaves the problem. Only a saving: a pair this walk missed
  // would still cost 0 and be moved by the solver.
  for (std::size_t p = 0, t = 0; p < dh && t < qh;) {
    if (dw[p] < qw[t]) {
      ++p;
    } else if (qw[t] < dw[p]) {
      ++t;
    } else {
      const double shared = std::min(a[p], b[t]);
      a[p] -= shared;
      b[t] -= shared;
      out.shared.push_back({p, t, shared, 0.0});
      ++p, ++t;
    }
  }
  rows.clear();
  cols.clear();
  out.a.clear();
  out.b.clear();
  double mass_a = 0, mass_b = 0;
  for (std::size_t p = 0; p < dh; ++p)
    if (a[p] > 0) rows.push_back(p), out.a.push_back(a[p]), mass_a += a[p];
  for (std::size_t t = 0; t < qh; ++t)
    if (b[t] > 0) cols.push_back(t), out.b.push_back(b[t]), mass_b += b[t];
  out.mass = rows.empty() || cols.empty() ? 0.0 : 0.5 * (mass_a + mass_b);
  const std::size_t nr = rows.size(), nc = cols.size();
  out.cost.resize(nr * nc);
  if (out.mass == 0) return out;
  if (sq_rows) {
    // The kept entries gathered, then square roots eight at a time.
    thread_local std::vector<float> kept;
    kept.resize(nr * nc);
    // The rows lie far apart in the cache, mostly beyond the CPU's: fetched ahead of use.
    const std::size_t span = (cols.back() + 1) * sizeof(float);
    for (std::size_t r = 0; r < std::min(nr, kRowsAhead); ++r)
      prefetch_lines(sq_rows[rows[r]], span);
    for (std::size_t r = 0; r < nr; ++r) {
      if (r + kRowsAhead < nr) prefetch_lines(sq_rows[rows[r + kRowsAhead]], span);
      const float* src = sq_rows[rows[r]];
      for (std::size_t c = 0; c < nc; ++c) kept[r * nc + c] = src[cols[c]];
    }
    cpu::kernels().sqrt_to_f64(kept.data(), nr * nc, out.cost.data());
    return out;
  }
  row_words.resize(nr);
  col_words.resize(nc);
  for (std::size_t r = 0; r < nr; ++r) row_words[r] = dw[rows[r]];
  for (std::size_t c = 0; c < nc; ++c) col_words[c] = qw[cols[c]];
  gather_f64(index, nullptr, row_words.data(), nr, x, xn);
  gather_f64(index, &qs, col_words.data(), nc, y, yn);
  double* cost = out.cost.data();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nr), static_cast<int>(nc),
              static_cast<int>(m), -2.0, x.data(), static_cast<int>(m), y.data(),
              static_cast<int>(m), 0.0, cost, static_cast<int>(nc));
  for (std::size_t r = 0; r < nr; ++r)
    for (std::size_t c = 0; c < nc; ++c) {
      double& d = cost[r * nc + c];
      d += xn[r] + yn[c];
      if (d < kWmdCostRecomputeBelow * (xn[r] + yn[c]))
        d = cpu::sq_dist_f64(index.vector(row_words[r]), query_word_vector(index, qs, col_words[c]),
                             m);
      d = std::sqrt(std::max(d, 0.0));
    }
  return out;
}

}  // namespace

double wmd_pair(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q) {
  const PairProblem& p = pair_problem(index, doc, qs, q);
  if (p.mass == 0) return 0;
  try {
    return p.mass * emd(p.a, p.b, p.cost);
  } catch (const Error& e) {
    throw Error("WMD of query '" + qs.ids[q] + "' and document '" + std::string(index.doc_id(doc)) +
                "': " + e.what());
  }
}

double wmd_pair_flow(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                     std::vector<PairFlow>& flows) {
  const PairProblem& p = pair_problem(index, doc, qs, q);
  flows = p.shared;
  if (p.mass == 0) return 0;
  thread_local std::vector<double> f;
  const double d = p.mass * emd(p.a, p.b, p.cost, &f);  // as wmd_pair computes it
  const std::size_t nc = p.cols.size();
  for (std::size_t r = 0; r < p.rows.size(); ++r)
    for (std::size_t c = 0; c < nc; ++c)
      if (f[r * nc + c] > 0)
        flows.push_back({p.rows[r], p.cols[c], p.mass * f[r * nc + c], p.cost[r * nc + c]});
  return d;
}

double wmd_dual_bound(const Index& index, std::size_t doc, const QuerySet& qs, std::size_t q,
                      const float* const* sq_rows, ot::DualEffort effort) {
  const PairProblem& p = pair_problem(index, doc, qs, q, sq_rows);
  return p.mass == 0 ? 0 : p.mass * ot::emd_dual_bound(p.a, p.b, p.cost, effort);
}

namespace {

using numerics::kWmdBoundSlack;

// The pricing bound's potentials come from the mean of this many documents of lowest bound:
// fewer lift fewer documents past the k-th WMD, more cost more duals than they save
// (BENCHMARKS.md, "Exact WMD").
constexpr std::size_t kPricingDocs = 30;

class Wmd final : public BatchDistance {
 public:
  Wmd(const Index& index, QueryRange q, const Phase1& p1, std::size_t cache_budget)
      : index_(index),
        q_(q),
        bounds_(make_lc_rwmd(index, q, Direction::symmetric, p1, cache_budget)) {}

  void compute(float* out) override {
    bounds_->compute(out);
    const std::size_t total = q_.size() * index_.n_docs();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < total; ++i) out[i] *= 1.0f - kWmdBoundSlack;
  }

  bool exact() const override { return false; }
  Phase1Counts phase1_counts() const override { return bounds_->phase1_counts(); }
  std::size_t tighten_levels() const override { return 2; }

  float tighten(std::size_t j, std::size_t doc, float lower, std::size_t level) const override {
    // From the cached lower bounds of the distances where LC-RWMD kept them (a gather instead
    // of a GEMM), then lowered like the other float bounds; else from the vectors in double.
    const std::size_t h = index_.indptr()[doc + 1] - index_.indptr()[doc];
    thread_local std::vector<const float*> sq;
    sq.resize(h);
    const WordDistanceCache* cache = bounds_->word_distances();
    if (cache) cache->doc_rows(j, doc, sq.data());
    const bool cached = cache != nullptr;
    const double d = wmd_dual_bound(index_, doc, q_.set, q_.begin + j, cached ? sq.data() : nullptr,
                                    level == 0 ? ot::kQuickDual : ot::kCloseDual);
    return std::max(lower, static_cast<float>(cached ? (1.0 - kWmdBoundSlack) * d : d));
  }

  float refine(std::size_t j, std::size_t doc, float) const override {
    return static_cast<float>(wmd_pair(index_, doc, q_.set, q_.begin + j));
  }

  // The pricing bound. Potentials g on the query's words alone are dual feasible with every
  // document once each vocabulary word u gets f(u) = min_t c(u, t) - g_t, so
  //   WMD(doc, query) >= sum_t q_t g_t + sum_u p_u f(u)
  // for all documents at the cost of one pass over the vocabulary and one sparse product
  // (g = 0 is RWMD's doc -> query direction). The bound is linear in p, so the g that
  // maximises the mean bound of a set of documents is the dual of the EMD between the query
  // and their mean: taken for the documents of lowest bound, those near the top-k, it lifts
  // the bounds from 0.78 of the WMD on average to 0.92 (bbcsport, test_wmd.cpp). The costs
  // come from the cache's lower bounds: a smaller c(u, t) only lowers f(u), and g stays feasible.
  void raise_bounds(std::size_t j, float* row) const override {
    const std::size_t n = index_.n_docs(), v = index_.vocab_size();
    const std::size_t q = q_.begin + j, qh = q_.set.length(q);
    const WordDistanceCache* cache = bounds_->word_distances();
    if (!cache || n < 2) return;
    const auto indptr = index_.indptr();
    const auto idx = index_.indices();
    const auto val = index_.values();
    const auto doc_total = [&](std::size_t i) {
      double s = 0;
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) s += val[p];
      return s;
    };
    // The mean of the documents of lowest bound (ties by position, for repeatable results).
    thread_local std::vector<std::uint32_t> order, words;
    thread_local std::vector<double> mass, a, b, cost;
    thread_local ot::Potentials dual;
    thread_local std::vector<float> gf, f;
    thread_local std::vector<const float*> rows;
    const std::size_t m = std::min(n, kPricingDocs);
    order.resize(n);
    std::iota(order.begin(), order.end(), 0u);
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m - 1), order.end(),
                     [&](std::uint32_t x, std::uint32_t y) {
                       return Neighbor{row[x], x} < Neighbor{row[y], y};
                     });
    mass.assign(v, 0.0);
    words.clear();
    for (std::size_t r = 0; r < m; ++r) {
      const std::size_t i = order[r];
      const double scale = 1.0 / (doc_total(i) * static_cast<double>(m));
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
        if (mass[idx[p]] == 0) words.push_back(idx[p]);
        mass[idx[p]] += val[p] * scale;
      }
    }
    std::sort(words.begin(), words.end());
    a.resize(words.size());
    for (std::size_t r = 0; r < words.size(); ++r) a[r] = mass[words[r]];
    const float* qw = q_.set.weights.data() + q_.set.indptr[q];
    b.assign(qw, qw + qh);
    // Its dual potentials on the query's words, from the cached distances.
    rows.resize(std::max(words.size(), v));
    cache->query_rows(j, words.data(), words.size(), rows.data());
    cost.resize(words.size() * qh);
    const cpu::Kernels& k = cpu::kernels();
    for (std::size_t r = 0; r < words.size(); ++r) k.sqrt_to_f64(rows[r], qh, cost.data() + r * qh);
    ot::emd_dual_bound(a, b, cost, ot::kCloseDual, &dual);
    const std::vector<double>& g = dual.g;
    // Shifting g by a constant leaves the bound as it is; from 0 up, its terms stay small.
    const double g0 = *std::min_element(g.begin(), g.end());
    gf.resize(qh);
    double base = 0, b_total = 0;
    for (std::size_t t = 0; t < qh; ++t) {
      gf[t] = static_cast<float>(g[t] - g0);
      b_total += b[t];
    }
    for (std::size_t t = 0; t < qh; ++t) base += b[t] / b_total * gf[t];
    // Every vocabulary word's f, then every document's bound, lowered as the other float bounds.
    words.resize(v);
    std::iota(words.begin(), words.end(), 0u);
    cache->query_rows(j, words.data(), v, rows.data());
    f.resize(v);
    for (std::size_t u = 0; u < v; ++u) {
      if (u + kRowsAhead < v) prefetch_lines(rows[u + kRowsAhead], qh * sizeof(float));
      f[u] = k.min_dist_minus(rows[u], gf.data(), qh);
    }
    // The slack is taken of the terms' magnitude: a document equal to the query sums to 0 from
    // terms that need not cancel exactly.
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0, magnitude = 0, total = 0;
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
        s += val[p] * double{f[idx[p]]};
        magnitude += val[p] * std::abs(double{f[idx[p]]});
        total += val[p];
      }
      const double bound = base + s / total - kWmdBoundSlack * (base + magnitude / total);
      row[i] = std::max(row[i], static_cast<float>(bound));
    }
  }

 private:
  const Index& index_;
  QueryRange q_;
  std::unique_ptr<BatchDistance> bounds_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_wmd(const Index& index, QueryRange queries,
                                        const Phase1& phase1, std::size_t cache_budget) {
  return std::make_unique<Wmd>(index, queries, phase1, cache_budget);
}

namespace {
// WMD's batch only shares phase 1 among queries whose pruned solves then dominate; a smaller one
// keeps its cache of word distances smaller and closer to the CPU (BENCHMARKS.md).
constexpr MethodImpl kWmdImpl{.cpu = {.make =
                                          [](const MethodContext& c) {
                                            return make_wmd(c.index, c.queries, *c.phase1,
                                                            c.cache_budget);
                                          },
                                      .word_pass = WordPass::nearest,
                                      .caches_word_distances = true,
                                      .max_batch = 16},
                              .explain = explain_wmd};
}  // namespace

extern constinit const MethodInfo kWmdMethod{
    .name = "wmd",
    .summary =
        "exact Word Mover's Distance, an EMD per pair; top-k solves only the pairs the RWMD and "
        "dual bounds leave a chance",
    .bounded = true,
    .costly_exact = true,
    .impl = &kWmdImpl};

}  // namespace lcrwmd
