// S-WMD's loss and gradient (learn/nca_objective.h), in double. The map's gradient is A M with
// M = sum over pairs and word pairs of s_ij (x_i - x_j)(x_i - x_j)', s_ij = g_ab T_ij / C_ij, so
// M gathers per word (the squares) and per document of the batch (the cross terms) rather
// than per word pair: a pair costs its transport and words_a x words_b x in_dim, not in_dim^2.
// The products (mapping words, the costs' dot products, the cross terms, M and A M) are BLAS's.
#include "learn/nca_objective.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "learn/log_sum_exp.h"

namespace lcrwmd {

WordMetric WordMetric::identity(std::size_t dim, std::size_t vocab) {
  WordMetric m;
  m.out_dim = m.in_dim = dim;
  m.map.assign(dim * dim, 0.0);
  for (std::size_t k = 0; k < dim; ++k) m.map[k * dim + k] = 1.0;
  m.weights.assign(vocab, 1.0);
  return m;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Charges the time since the last switch to one of two accounts.
class Stopwatch {
 public:
  explicit Stopwatch(double* account) : account_(account) {}
  void charge_to(double* account) {
    const auto now = std::chrono::steady_clock::now();
    *account_ += std::chrono::duration<double>(now - last_).count();
    last_ = now;
    account_ = account;
  }

 private:
  double* account_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// C (rows x cols) = alpha op(A) op(B) + beta C, row-major; op(A) rows x k (A itself k x rows
// where transposed), op(B) k x cols (B cols x k where transposed). Nothing for an empty product.
void gemm(bool transpose_a, bool transpose_b, std::size_t rows, std::size_t cols, std::size_t k,
          double alpha, const double* a, const double* b, double beta, double* c) {
  if (rows == 0 || cols == 0 || k == 0) return;
  cblas_dgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(rows),
              static_cast<int>(cols), static_cast<int>(k), alpha, a,
              static_cast<int>(transpose_a ? rows : k), b, static_cast<int>(transpose_b ? k : cols),
              beta, c, static_cast<int>(cols));
}
constexpr bool kT = true, kN = false;

// A document in the metric: its words' vectors (as given, and mapped) and its weighted,
// renormalised counts.
struct Mapped {
  std::vector<double> x;     // words x in_dim
  std::vector<double> y;     // words x out_dim
  std::vector<double> y_sq;  // each row of y's squared length
  std::vector<double> hist;  // sums to 1
  double mass = 0;           // sum of weight x count, before renormalising
};

// The words the documents of a call use, each mapped by A once (a word recurs across a batch's
// documents and candidates), as one product: row(u) = A x_u.
class MappedWords {
 public:
  MappedWords(const NcaProblem& p, const WordMetric& m, std::span<const std::uint32_t> batch,
              std::span<const std::vector<std::uint32_t>> candidates)
      : out_(m.out_dim), slot_(m.weights.size(), kNone) {
    const auto take = [&](std::uint32_t d) {
      for (const std::uint32_t u : p.docs[d].words)
        if (slot_[u] == kNone) {
          slot_[u] = words_.size();
          words_.push_back(u);
        }
    };
    for (std::size_t k = 0; k < batch.size(); ++k) {
      take(batch[k]);
      for (const std::uint32_t d : candidates[k]) take(d);
    }
    const std::size_t in = m.in_dim;
    std::vector<double> x(words_.size() * in);
    for (std::size_t w = 0; w < words_.size(); ++w)
      std::copy_n(p.vectors.data() + std::size_t{words_[w]} * in, in, x.begin() + w * in);
    rows_.resize(words_.size() * out_);
    gemm(kN, kT, words_.size(), out_, in, 1.0, x.data(), m.map.data(), 0.0, rows_.data());
  }
  const double* row(std::uint32_t word) const { return rows_.data() + slot_[word] * out_; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t out_;
  std::vector<std::size_t> slot_;
  std::vector<std::uint32_t> words_;
  std::vector<double> rows_;
};

Mapped map_document(const NcaProblem& p, const MappedWords& words, const WordMetric& m,
                    const WordBag& doc) {
  const std::size_t n = doc.words.size(), in = m.in_dim, out = m.out_dim;
  Mapped d;
  d.x.resize(n * in);
  d.y.resize(n * out);
  d.y_sq.resize(n);
  d.hist.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(p.vectors.data() + std::size_t{doc.words[i]} * in, in, d.x.begin() + i * in);
    const double* y = words.row(doc.words[i]);
    std::copy(y, y + out, d.y.begin() + static_cast<std::ptrdiff_t>(i * out));
    d.y_sq[i] = 0;
    for (std::size_t r = 0; r < out; ++r) d.y_sq[i] += y[r] * y[r];
    d.hist[i] = m.weights[doc.words[i]] * doc.counts[i];
    d.mass += d.hist[i];
  }
  for (double& h : d.hist) h /= d.mass;
  return d;
}

// The Euclidean distances of a's mapped words to b's, from their lengths and dot products (one
// product); a word against itself exactly 0, as it is under every map.
std::vector<double> costs(const WordBag& a, const Mapped& ma, const WordBag& b, const Mapped& mb,
                          std::size_t out) {
  const std::size_t n = ma.hist.size(), m = mb.hist.size();
  std::vector<double> c(n * m);
  gemm(kN, kT, n, m, out, -2.0, ma.y.data(), mb.y.data(), 0.0, c.data());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double& e = c[i * m + j];
      e = a.words[i] == b.words[j] ? 0.0 : std::sqrt(std::max(0.0, e + ma.y_sq[i] + mb.y_sq[j]));
    }
  return c;
}

// d D / d weights through one side's renormalised counts: the potentials, less their mean
// under the histogram (the renormalisation's share), per word.
void add_weight_gradient(const WordBag& doc, const Mapped& d, const std::vector<double>& potential,
                         double g, std::vector<double>& grad) {
  double mean = 0;
  for (std::size_t i = 0; i < d.hist.size(); ++i) mean += potential[i] * d.hist[i];
  for (std::size_t i = 0; i < d.hist.size(); ++i)
    grad[doc.words[i]] += g * doc.counts[i] * (potential[i] - mean) / d.mass;
}

// A document's weighted mean, of its vectors (in_dim) and of its mapped ones (out_dim).
struct Centroid {
  std::vector<double> x, y;
};
Centroid centroid(const Mapped& d, std::size_t in, std::size_t out) {
  Centroid c{std::vector<double>(in, 0.0), std::vector<double>(out, 0.0)};
  for (std::size_t i = 0; i < d.hist.size(); ++i) {
    for (std::size_t e = 0; e < in; ++e) c.x[e] += d.hist[i] * d.x[i * in + e];
    for (std::size_t r = 0; r < out; ++r) c.y[r] += d.hist[i] * d.y[i * out + r];
  }
  return c;
}

// Two documents' centroid distance ||A u||, u = c_a - c_b, and what its gradient needs: u, A u,
// and each word's share through its weight ((A x) . (A u) / D; b's negated).
struct Centroids {
  double value = 0;
  std::vector<double> u, au, potential_a, potential_b;
};

Centroids centroid_distance(const Mapped& ma, const Centroid& ca, const Mapped& mb,
                            const Centroid& cb, std::size_t out) {
  Centroids e;
  e.u.resize(ca.x.size());
  for (std::size_t q = 0; q < e.u.size(); ++q) e.u[q] = ca.x[q] - cb.x[q];
  e.au.resize(out);
  double sq = 0;
  for (std::size_t r = 0; r < out; ++r) {
    e.au[r] = ca.y[r] - cb.y[r];
    sq += e.au[r] * e.au[r];
  }
  e.value = std::sqrt(sq);
  if (e.value == 0) return e;
  const auto shares = [&](const Mapped& d, double sign) {
    std::vector<double> s(d.hist.size(), 0.0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      for (std::size_t r = 0; r < out; ++r) s[i] += d.y[i * out + r] * e.au[r];
      s[i] *= sign / e.value;
    }
    return s;
  };
  e.potential_a = shares(ma, 1.0);
  e.potential_b = shares(mb, -1.0);
  return e;
}

}  // namespace

std::vector<std::vector<double>> nca_distances(
    const NcaProblem& p, const WordMetric& metric, std::span<const std::uint32_t> batch,
    std::span<const std::vector<std::uint32_t>> candidates, NcaWork* work) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t in = metric.in_dim, out = metric.out_dim;
  std::vector<std::vector<double>> result(batch.size());
  std::vector<std::size_t> iterations(batch.size(), 0);
  const MappedWords words(p, metric, batch, candidates);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const WordBag& a = p.docs[batch[k]];
    const Mapped ma = map_document(p, words, metric, a);
    const Centroid ca = centroid(ma, in, out);
    for (const std::uint32_t b : candidates[k]) {
      const Mapped mb = map_document(p, words, metric, p.docs[b]);
      if (p.distance == NcaDistance::centroid) {
        result[k].push_back(centroid_distance(ma, ca, mb, centroid(mb, in, out), out).value);
        continue;
      }
      const EntropicTransport t =
          entropic_transport(ma.hist, mb.hist, costs(a, ma, p.docs[b], mb, out), p.transport);
      result[k].push_back(t.value);
      iterations[k] += t.iterations;
    }
  }
  if (work) {
    if (p.distance == NcaDistance::transport)
      for (std::size_t k = 0; k < batch.size(); ++k) {
        work->transports += candidates[k].size();
        work->iterations += iterations[k];
      }
    work->distance_seconds += seconds_since(start);
  }
  return result;
}

std::vector<double> largest_costs(const NcaProblem& p, const WordMetric& metric,
                                  std::span<const std::uint32_t> docs,
                                  std::span<const std::uint32_t> partners) {
  std::vector<std::vector<std::uint32_t>> as_candidates(docs.size());
  for (std::size_t k = 0; k < docs.size(); ++k) as_candidates[k] = {partners[k]};
  const MappedWords words(p, metric, docs, as_candidates);
  std::vector<double> largest(docs.size(), 0.0);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const WordBag& a = p.docs[docs[k]];
    const WordBag& b = p.docs[partners[k]];
    const std::vector<double> c = costs(a, map_document(p, words, metric, a), b,
                                        map_document(p, words, metric, b), metric.out_dim);
    if (!c.empty()) largest[k] = *std::max_element(c.begin(), c.end());
  }
  return largest;
}

NcaValue nca_objective(const NcaProblem& p, const WordMetric& metric,
                       std::span<const std::uint32_t> batch,
                       std::span<const std::vector<std::uint32_t>> candidates, bool gradient) {
  const std::size_t in = metric.in_dim, out = metric.out_dim;
  const bool by_centroid = p.distance == NcaDistance::centroid;
  NcaValue v;
  Stopwatch watch(&v.work.distance_seconds);
  const MappedWords words(p, metric, batch, candidates);
  // M's parts (the transport's): per vocabulary word, and in x in (the cross terms); and the
  // centroid pairs' (g / D) A u and u, a row each, whose products are their share of A M.
  std::vector<double> squares, cross, scaled_au, pair_u;
  if (gradient) {
    v.grad_weights.assign(metric.weights.size(), 0.0);
    squares.assign(metric.weights.size(), 0.0);
    cross.assign(in * in, 0.0);
  }
  for (std::size_t k = 0; k < batch.size(); ++k) {
    watch.charge_to(&v.work.distance_seconds);
    const WordBag& a = p.docs[batch[k]];
    const std::uint32_t label = p.labels[batch[k]];
    const std::vector<std::uint32_t>& cand = candidates[k];
    const Mapped ma = map_document(p, words, metric, a);
    const Centroid ca = by_centroid ? centroid(ma, in, out) : Centroid{};
    const std::size_t nc = cand.size();
    std::vector<Mapped> mb(nc);
    std::vector<std::vector<double>> cost(nc);
    std::vector<EntropicTransport> t(nc);
    std::vector<Centroids> cd(nc);
    std::vector<double> all(nc), same;  // -D over every candidate, and over those of a's label
    // The pairs' transports, a candidate per thread (each the same bits whatever the threads).
#pragma omp parallel for schedule(dynamic)
    for (std::size_t c = 0; c < nc; ++c) {
      const WordBag& b = p.docs[cand[c]];
      mb[c] = map_document(p, words, metric, b);
      if (by_centroid) {
        cd[c] = centroid_distance(ma, ca, mb[c], centroid(mb[c], in, out), out);
        all[c] = -cd[c].value;
      } else {
        cost[c] = costs(a, ma, b, mb[c], out);
        t[c] = entropic_transport(ma.hist, mb[c].hist, cost[c], p.transport);
        all[c] = -t[c].value;
      }
    }
    if (!by_centroid) {
      v.work.transports += nc;
      for (const EntropicTransport& e : t) v.work.iterations += e.iterations;
    }
    watch.charge_to(&v.work.gradient_seconds);
    for (std::size_t c = 0; c < nc; ++c)
      if (p.labels[cand[c]] == label) same.push_back(all[c]);
    if (same.empty()) continue;
    const double lse_all = log_sum_exp(all), lse_same = log_sum_exp(same);
    v.loss += lse_all - lse_same;
    ++v.documents;
    if (!gradient) continue;
    const std::size_t na = a.words.size();
    std::vector<double> z(na * in, 0.0);  // sum over candidates of S X_b
    std::vector<double> s;
    for (std::size_t c = 0; c < nc; ++c) {
      const WordBag& b = p.docs[cand[c]];
      const std::size_t nb = b.words.size();
      const double d = -all[c];
      const double g =
          (p.labels[cand[c]] == label ? std::exp(-d - lse_same) : 0.0) - std::exp(-d - lse_all);
      if (by_centroid) {
        // d D / d A = A u u' / D; through the weights, each word's share.
        const Centroids& e = cd[c];
        if (e.value == 0) continue;  // the same centroid under every map
        for (const double x : e.au) scaled_au.push_back(g / e.value * x);
        pair_u.insert(pair_u.end(), e.u.begin(), e.u.end());
        add_weight_gradient(a, ma, e.potential_a, g, v.grad_weights);
        add_weight_gradient(b, mb[c], e.potential_b, g, v.grad_weights);
        continue;
      }
      add_weight_gradient(a, ma, t[c].alpha, g, v.grad_weights);
      add_weight_gradient(b, mb[c], t[c].beta, g, v.grad_weights);
      // s_ij = g T_ij / C_ij: a word against itself (C = 0 under every map) has none.
      s.assign(na * nb, 0.0);
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j) {
          const double cij = cost[c][i * nb + j];
          if (cij == 0) continue;
          const double sij = g * t[c].plan[i * nb + j] / cij;
          s[i * nb + j] = sij;
          squares[a.words[i]] += sij;
          squares[b.words[j]] += sij;
        }
      gemm(kN, kN, na, in, nb, 1.0, s.data(), mb[c].x.data(), 1.0, z.data());
    }
    if (!by_centroid) gemm(kT, kN, in, in, na, 1.0, ma.x.data(), z.data(), 1.0, cross.data());
  }
  watch.charge_to(&v.work.gradient_seconds);
  if (v.documents == 0) return v;
  const double scale = 1.0 / static_cast<double>(v.documents);
  v.loss *= scale;
  if (!gradient) return v;
  v.grad_map.assign(out * in, 0.0);
  if (!by_centroid) {
    // M = sum_u squares_u x_u x_u' - cross - cross', over the words with a square; A M.
    std::vector<double> xs, ws;
    std::size_t used = 0;
    for (std::size_t u = 0; u < squares.size(); ++u) {
      if (squares[u] == 0) continue;
      const double* x = p.vectors.data() + u * in;
      xs.insert(xs.end(), x, x + in);
      for (std::size_t e = 0; e < in; ++e) ws.push_back(squares[u] * x[e]);
      ++used;
    }
    std::vector<double> m(in * in, 0.0);
    gemm(kT, kN, in, in, used, 1.0, ws.data(), xs.data(), 0.0, m.data());
    for (std::size_t r = 0; r < in; ++r)
      for (std::size_t e = 0; e < in; ++e) m[r * in + e] -= cross[r * in + e] + cross[e * in + r];
    gemm(kN, kN, out, in, in, scale, metric.map.data(), m.data(), 0.0, v.grad_map.data());
  }
  gemm(kT, kN, out, in, scaled_au.size() / std::max<std::size_t>(out, 1), scale, scaled_au.data(),
       pair_u.data(), 1.0, v.grad_map.data());
  for (double& g : v.grad_weights) g *= scale;
  watch.charge_to(&v.work.gradient_seconds);
  return v;
}

}  // namespace lcrwmd
