// S-WMD's loss and gradient (learn/nca_objective.h), in double. The map's gradient is A M with
// M = sum over pairs and word pairs of s_ij (x_i - x_j)(x_i - x_j)', s_ij = g_ab T_ij / C_ij, so
// M gathers per word (the squares) and per document of the batch (the cross terms) rather
// than per word pair: a pair costs its transport and words_a x words_b x in_dim, not in_dim^2.
#include "learn/nca_objective.h"

#include <algorithm>
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

// A document in the metric: its words' mapped vectors and its weighted, renormalised counts.
struct Mapped {
  std::vector<double> y;     // words x out_dim
  std::vector<double> hist;  // sums to 1
  double mass = 0;           // sum of weight x count, before renormalising
};

// The words the documents of a call use, each mapped by A once (a word recurs across a batch's
// documents and candidates): row(u) = A x_u.
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
    rows_.assign(words_.size() * out_, 0.0);
#pragma omp parallel for schedule(static)
    for (std::size_t w = 0; w < words_.size(); ++w) {
      const double* x = p.vectors.data() + std::size_t{words_[w]} * in;
      for (std::size_t r = 0; r < out_; ++r) {
        double s = 0;
        for (std::size_t c = 0; c < in; ++c) s += m.map[r * in + c] * x[c];
        rows_[w * out_ + r] = s;
      }
    }
  }
  const double* row(std::uint32_t word) const { return rows_.data() + slot_[word] * out_; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t out_;
  std::vector<std::size_t> slot_;
  std::vector<std::uint32_t> words_;
  std::vector<double> rows_;
};

Mapped map_document(const MappedWords& words, const WordMetric& m, const WordBag& doc) {
  const std::size_t n = doc.words.size(), out = m.out_dim;
  Mapped d;
  d.y.resize(n * out);
  d.hist.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* y = words.row(doc.words[i]);
    std::copy(y, y + out, d.y.begin() + static_cast<std::ptrdiff_t>(i * out));
    d.hist[i] = m.weights[doc.words[i]] * doc.counts[i];
    d.mass += d.hist[i];
  }
  for (double& h : d.hist) h /= d.mass;
  return d;
}

std::vector<double> costs(const Mapped& a, const Mapped& b, std::size_t out) {
  const std::size_t n = a.hist.size(), m = b.hist.size();
  std::vector<double> c(n * m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double sq = 0;
      for (std::size_t r = 0; r < out; ++r) {
        const double e = a.y[i * out + r] - b.y[j * out + r];
        sq += e * e;
      }
      c[i * m + j] = std::sqrt(sq);
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

// Two documents' centroid distance ||A u||, u = c_a - c_b, and what its gradient needs: u, and
// each word's share through its weight (x . A'A u / D; b's negated).
struct Centroids {
  double value = 0;
  std::vector<double> u, potential_a, potential_b;
};

Centroids centroid_distance(const NcaProblem& p, const WordMetric& m, const WordBag& a,
                            const Mapped& ma, const WordBag& b, const Mapped& mb) {
  const std::size_t in = m.in_dim, out = m.out_dim;
  Centroids e;
  e.u.assign(in, 0.0);
  const auto add = [&](const WordBag& doc, const Mapped& d, double sign) {
    for (std::size_t i = 0; i < doc.words.size(); ++i) {
      const double* x = p.vectors.data() + std::size_t{doc.words[i]} * in;
      for (std::size_t q = 0; q < in; ++q) e.u[q] += sign * d.hist[i] * x[q];
    }
  };
  add(a, ma, 1.0);
  add(b, mb, -1.0);
  std::vector<double> au(out, 0.0);
  for (std::size_t r = 0; r < out; ++r)
    for (std::size_t q = 0; q < in; ++q) au[r] += m.map[r * in + q] * e.u[q];
  double sq = 0;
  for (const double x : au) sq += x * x;
  e.value = std::sqrt(sq);
  if (e.value == 0) return e;
  std::vector<double> w(in, 0.0);  // A'A u / D
  for (std::size_t r = 0; r < out; ++r)
    for (std::size_t q = 0; q < in; ++q) w[q] += m.map[r * in + q] * au[r] / e.value;
  const auto shares = [&](const WordBag& doc, double sign) {
    std::vector<double> s(doc.words.size(), 0.0);
    for (std::size_t i = 0; i < doc.words.size(); ++i) {
      const double* x = p.vectors.data() + std::size_t{doc.words[i]} * in;
      for (std::size_t q = 0; q < in; ++q) s[i] += sign * x[q] * w[q];
    }
    return s;
  };
  e.potential_a = shares(a, 1.0);
  e.potential_b = shares(b, -1.0);
  return e;
}

}  // namespace

std::vector<std::vector<double>> nca_distances(
    const NcaProblem& p, const WordMetric& metric, std::span<const std::uint32_t> batch,
    std::span<const std::vector<std::uint32_t>> candidates) {
  std::vector<std::vector<double>> out(batch.size());
  const MappedWords words(p, metric, batch, candidates);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const WordBag& a = p.docs[batch[k]];
    const Mapped ma = map_document(words, metric, a);
    for (const std::uint32_t b : candidates[k]) {
      const Mapped mb = map_document(words, metric, p.docs[b]);
      out[k].push_back(
          p.distance == NcaDistance::centroid
              ? centroid_distance(p, metric, a, ma, p.docs[b], mb).value
              : entropic_transport(ma.hist, mb.hist, costs(ma, mb, metric.out_dim), p.transport)
                    .value);
    }
  }
  return out;
}

NcaValue nca_objective(const NcaProblem& p, const WordMetric& metric,
                       std::span<const std::uint32_t> batch,
                       std::span<const std::vector<std::uint32_t>> candidates, bool gradient) {
  const std::size_t in = metric.in_dim, out = metric.out_dim;
  const MappedWords words(p, metric, batch, candidates);
  NcaValue v;
  // M's parts: per vocabulary word, and in x in (the transport's cross terms; the centroids'
  // outer products).
  std::vector<double> squares, cross, direct;
  if (gradient) {
    v.grad_weights.assign(metric.weights.size(), 0.0);
    squares.assign(metric.weights.size(), 0.0);
    cross.assign(in * in, 0.0);
    direct.assign(in * in, 0.0);
  }
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const WordBag& a = p.docs[batch[k]];
    const std::uint32_t label = p.labels[batch[k]];
    const std::vector<std::uint32_t>& cand = candidates[k];
    const Mapped ma = map_document(words, metric, a);
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
      mb[c] = map_document(words, metric, b);
      if (p.distance == NcaDistance::centroid) {
        cd[c] = centroid_distance(p, metric, a, ma, b, mb[c]);
        all[c] = -cd[c].value;
      } else {
        cost[c] = costs(ma, mb[c], out);
        t[c] = entropic_transport(ma.hist, mb[c].hist, cost[c], p.transport);
        all[c] = -t[c].value;
      }
    }
    for (std::size_t c = 0; c < nc; ++c)
      if (p.labels[cand[c]] == label) same.push_back(all[c]);
    if (same.empty()) continue;
    const double lse_all = log_sum_exp(all), lse_same = log_sum_exp(same);
    v.loss += lse_all - lse_same;
    ++v.documents;
    if (!gradient) continue;
    const std::size_t na = a.words.size();
    std::vector<double> z(na * in, 0.0);  // sum over candidates of S X_b
    for (std::size_t c = 0; c < cand.size(); ++c) {
      const WordBag& b = p.docs[cand[c]];
      const std::size_t nb = b.words.size();
      const double d = -all[c];
      const double g =
          (p.labels[cand[c]] == label ? std::exp(-d - lse_same) : 0.0) - std::exp(-d - lse_all);
      if (p.distance == NcaDistance::centroid) {
        // d D / d A = A u u' / D; through the weights, each word's x . A'A u / D (b's negated).
        const Centroids& e = cd[c];
        if (e.value == 0) continue;  // the same centroid under every map
        for (std::size_t r = 0; r < in; ++r)
          for (std::size_t q = 0; q < in; ++q) direct[r * in + q] += g * e.u[r] * e.u[q] / e.value;
        add_weight_gradient(a, ma, e.potential_a, g, v.grad_weights);
        add_weight_gradient(b, mb[c], e.potential_b, g, v.grad_weights);
        continue;
      }
      add_weight_gradient(a, ma, t[c].alpha, g, v.grad_weights);
      add_weight_gradient(b, mb[c], t[c].beta, g, v.grad_weights);
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j) {
          const double cij = cost[c][i * nb + j];
          if (cij == 0) continue;  // the same point: its cost is 0 under every map
          const double s = g * t[c].plan[i * nb + j] / cij;
          squares[a.words[i]] += s;
          squares[b.words[j]] += s;
          const double* xb = p.vectors.data() + std::size_t{b.words[j]} * in;
          for (std::size_t e = 0; e < in; ++e) z[i * in + e] += s * xb[e];
        }
    }
    for (std::size_t i = 0; i < na; ++i) {
      const double* xa = p.vectors.data() + std::size_t{a.words[i]} * in;
      for (std::size_t r = 0; r < in; ++r)
        for (std::size_t e = 0; e < in; ++e) cross[r * in + e] += xa[r] * z[i * in + e];
    }
  }
  if (v.documents == 0) return v;
  const double scale = 1.0 / static_cast<double>(v.documents);
  v.loss *= scale;
  if (!gradient) return v;
  // M = sum_u squares_u x_u x_u' - cross - cross' + direct; the map's gradient A M.
  std::vector<double> m(in * in, 0.0);
  for (std::size_t u = 0; u < squares.size(); ++u) {
    if (squares[u] == 0) continue;
    const double* x = p.vectors.data() + u * in;
    for (std::size_t r = 0; r < in; ++r)
      for (std::size_t e = 0; e < in; ++e) m[r * in + e] += squares[u] * x[r] * x[e];
  }
  for (std::size_t r = 0; r < in; ++r)
    for (std::size_t e = 0; e < in; ++e)
      m[r * in + e] += direct[r * in + e] - cross[r * in + e] - cross[e * in + r];
  v.grad_map.assign(out * in, 0.0);
  for (std::size_t r = 0; r < out; ++r)
    for (std::size_t c = 0; c < in; ++c) {
      double s = 0;
      for (std::size_t e = 0; e < in; ++e) s += metric.map[r * in + e] * m[e * in + c];
      v.grad_map[r * in + c] = s * scale;
    }
  for (double& g : v.grad_weights) g *= scale;
  return v;
}

}  // namespace lcrwmd
