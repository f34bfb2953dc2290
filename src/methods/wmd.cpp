// Exact Word Mover's Distance (Kusner et al. 2015): the EMD between two documents' weights
// with Euclidean word costs. For top-k search it comes with three lower bounds, each cheaper
// than the next step: symmetric LC-RWMD's bound for every document at once, the pair's RWMD
// (the other direction from the cached word distances), a dual bound of the pair's EMD (~98%
// of it, for a few passes over the cost matrix), then the EMD itself.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/numerics.h"
#include "cpu/distance_kernels.h"
#include "cpu/simd.h"
#include "lcrwmd/emd.h"
#include "lcrwmd/error.h"
#include "methods/batch_distance.h"
#include "ot/dual_bound.h"

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
    for (std::size_t r = 0; r < nr; ++r) {
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

class Wmd final : public BatchDistance {
 public:
  Wmd(const Index& index, QueryRange q, const CpuOptions& opt, std::size_t cache_budget)
      : index_(index), q_(q), bounds_(make_lc_rwmd(index, q, true, opt, cache_budget)) {}

  void compute(float* out) override {
    bounds_->compute(out);
    const std::size_t total = q_.size() * index_.n_docs();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < total; ++i) out[i] *= 1.0f - kWmdBoundSlack;
  }

  bool exact() const override { return false; }
  std::size_t tighten_levels() const override { return 3; }

  float tighten(std::size_t j, std::size_t doc, float lower, std::size_t level) const override {
    if (level == 0) return (1.0f - kWmdBoundSlack) * bounds_->refine(j, doc, lower);
    // From the cached float distances where LC-RWMD kept them (a gather instead of a GEMM),
    // then lowered like the other float bounds; else from the vectors in double.
    const std::size_t h = index_.indptr()[doc + 1] - index_.indptr()[doc];
    thread_local std::vector<const float*> sq;
    sq.resize(h);
    const bool cached = bounds_->pair_sq_rows(j, doc, sq.data());
    const double d = wmd_dual_bound(index_, doc, q_.set, q_.begin + j, cached ? sq.data() : nullptr,
                                    level == 1 ? ot::kQuickDual : ot::kCloseDual);
    return std::max(lower, static_cast<float>(cached ? (1.0 - kWmdBoundSlack) * d : d));
  }

  float refine(std::size_t j, std::size_t doc, float) const override {
    return static_cast<float>(wmd_pair(index_, doc, q_.set, q_.begin + j));
  }

 private:
  const Index& index_;
  QueryRange q_;
  std::unique_ptr<BatchDistance> bounds_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_wmd(const Index& index, QueryRange queries,
                                        const CpuOptions& options, std::size_t cache_budget) {
  return std::make_unique<Wmd>(index, queries, options, cache_budget);
}

}  // namespace lcrwmd
