// S-WMD's loss and gradient (learn/nca_objective.h), in double. The map's gradient is A M with
// M = sum over pairs and word pairs of s_ij (x_i - x_j)(x_i - x_j)', s_ij = g_ab T_ij / C_ij, so
// M gathers per word (the squares) and per document of the batch (the cross terms) rather
// than per word pair: a pair costs its transport and words_a x words_b x in_dim, not in_dim^2.
// The products (mapping words, the costs' dot products, the cross terms, M and A M) are BLAS's.
// A batch's documents are shared among the threads whole (their transports and their gradient
// terms), and their terms summed in the batch's order: the same bits whatever the threads.
#include "learn/nca_objective.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <unordered_map>

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

// A document in the metric: its weighted, renormalised counts (weigh), and where transport's
// costs need them its words' vectors as given and mapped (map_document).
struct Mapped {
  std::vector<double> x;     // words x in_dim
  std::vector<double> y;     // words x out_dim
  std::vector<double> y_sq;  // each row of y's squared length
  std::vector<double> hist;  // sums to 1
  double mass = 0;           // sum of weight x count, before renormalising
};

// Ids numbered in the order first taken (the rows of a call's products).
class FirstSeen {
 public:
  explicit FirstSeen(std::size_t ids) : slot_(ids, kNone) {}
  void take(std::uint32_t id) {
    if (slot_[id] != kNone) return;
    slot_[id] = ids_.size();
    ids_.push_back(id);
  }
  std::size_t slot(std::uint32_t id) const { return slot_[id]; }
  const std::vector<std::uint32_t>& ids() const { return ids_; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::size_t> slot_;
  std::vector<std::uint32_t> ids_;
};

// The documents of a call: each of the batch, then its candidates, in order, first seen first.
FirstSeen documents_of(const NcaProblem& p, std::span<const std::uint32_t> batch,
                       std::span<const std::vector<std::uint32_t>> candidates) {
  FirstSeen docs(p.docs.size());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    docs.take(batch[k]);
    for (const std::uint32_t d : candidates[k]) docs.take(d);
  }
  return docs;
}

// The words the documents of a call use, each mapped by A once (a word recurs across a batch's
// documents and candidates), as one product: row(u) = A x_u.
class MappedWords {
 public:
  MappedWords(const NcaProblem& p, const WordMetric& m, std::span<const std::uint32_t> batch,
              std::span<const std::vector<std::uint32_t>> candidates)
      : out_(m.out_dim), words_(m.weights.size()) {
    const FirstSeen docs = documents_of(p, batch, candidates);
    for (const std::uint32_t d : docs.ids())
      for (const std::uint32_t u : p.docs[d].words) words_.take(u);
    const std::size_t in = m.in_dim, n = words_.ids().size();
    std::vector<double> x(n * in);
    for (std::size_t w = 0; w < n; ++w)
      std::copy_n(p.vectors.data() + std::size_t{words_.ids()[w]} * in, in, x.begin() + w * in);
    rows_.resize(n * out_);
    gemm(kN, kT, n, out_, in, 1.0, x.data(), m.map.data(), 0.0, rows_.data());
  }
  const double* row(std::uint32_t word) const { return rows_.data() + words_.slot(word) * out_; }

 private:
  std::size_t out_;
  FirstSeen words_;
  std::vector<double> rows_;
};

// A document's weighted, renormalised counts.
Mapped weigh(const WordBag& doc, const WordMetric& m) {
  Mapped d;
  d.hist.resize(doc.words.size());
  for (std::size_t i = 0; i < d.hist.size(); ++i) {
    d.hist[i] = m.weights[doc.words[i]] * doc.counts[i];
    d.mass += d.hist[i];
  }
  for (double& h : d.hist) h /= d.mass;
  return d;
}

// A document's weights, vectors and mapped words (transport's costs need them).
Mapped map_document(const NcaProblem& p, const MappedWords& words, const WordMetric& m,
                    const WordBag& doc) {
  const std::size_t n = doc.words.size(), in = m.in_dim, out = m.out_dim;
  Mapped d = weigh(doc, m);
  d.x.resize(n * in);
  d.y.resize(n * out);
  d.y_sq.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(p.vectors.data() + std::size_t{doc.words[i]} * in, in, d.x.begin() + i * in);
    const double* y = words.row(doc.words[i]);
    std::copy(y, y + out, d.y.begin() + static_cast<std::ptrdiff_t>(i * out));
    d.y_sq[i] = 0;
    for (std::size_t r = 0; r < out; ++r) d.y_sq[i] += y[r] * y[r];
  }
  return d;
}

// The words of a document's candidates, each once (a word recurs across them), and the dot
// products of the document's mapped words with theirs (one product): each pair's costs are read
// from them, and the gradient's sum over the candidates of S X_b is one product over them too.
class CandidateWords {
 public:
  CandidateWords(const NcaProblem& p, const MappedWords& words, const Mapped& ma,
                 std::span<const std::uint32_t> candidates, std::size_t out)
      : slots_(candidates.size()) {
    std::unordered_map<std::uint32_t, std::uint32_t> slot;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      for (const std::uint32_t u : p.docs[candidates[c]].words) {
        const auto [at, added] = slot.emplace(u, static_cast<std::uint32_t>(words_.size()));
        if (added) words_.push_back(u);
        slots_[c].push_back(at->second);
      }
    const std::size_t n = words_.size(), na = ma.hist.size();
    std::vector<double> y(n * out);
    squares_.resize(n);
    for (std::size_t w = 0; w < n; ++w) {
      const double* row = words.row(words_[w]);
      std::copy(row, row + out, y.begin() + static_cast<std::ptrdiff_t>(w * out));
      squares_[w] = 0;
      for (std::size_t r = 0; r < out; ++r) squares_[w] += row[r] * row[r];
    }
    dots_.resize(na * n);
    gemm(kN, kT, na, n, out, 1.0, ma.y.data(), y.data(), 0.0, dots_.data());
  }
  std::size_t size() const { return words_.size(); }
  // The vocabulary id of the word in place w.
  std::uint32_t word(std::size_t w) const { return words_[w]; }
  // Candidate c's words' places among them.
  const std::vector<std::uint32_t>& slots(std::size_t c) const { return slots_[c]; }
  // Their vectors as given, a row each.
  std::vector<double> vectors(const NcaProblem& p) const {
    std::vector<double> x(words_.size() * p.in_dim);
    for (std::size_t w = 0; w < words_.size(); ++w)
      std::copy_n(p.vectors.data() + std::size_t{words_[w]} * p.in_dim, p.in_dim,
                  x.begin() + static_cast<std::ptrdiff_t>(w * p.in_dim));
    return x;
  }
  // The Euclidean distances of a's mapped words to candidate c's (a's words x c's), from their
  // lengths and dot products; a word against itself exactly 0, as it is under every map.
  std::vector<double> costs(const WordBag& a, const Mapped& ma, std::size_t c) const {
    const std::vector<std::uint32_t>& at = slots_[c];
    const std::size_t na = ma.hist.size(), nb = at.size(), n = words_.size();
    std::vector<double> cost(na * nb);
    for (std::size_t i = 0; i < na; ++i)
      for (std::size_t j = 0; j < nb; ++j) {
        const std::uint32_t w = at[j];
        cost[i * nb + j] =
            a.words[i] == words_[w]
                ? 0.0
                : std::sqrt(std::max(0.0, ma.y_sq[i] + squares_[w] - 2 * dots_[i * n + w]));
      }
    return cost;
  }

 private:
  std::vector<std::uint32_t> words_;               // vocabulary ids
  std::vector<std::vector<std::uint32_t>> slots_;  // per candidate, per word: its place
  std::vector<double> squares_;                    // each word's mapped length, squared
  std::vector<double> dots_;                       // a's words x these words
};

// d D / d weights through one side's renormalised counts, times g: the potentials, less their
// mean under the histogram (the renormalisation's share), word i's term given to add(i, term).
template <typename Add>
void weight_terms(const WordBag& doc, const Mapped& d, std::span<const double> potential, double g,
                  Add&& add) {
  double mean = 0;
  for (std::size_t i = 0; i < d.hist.size(); ++i) mean += potential[i] * d.hist[i];
  for (std::size_t i = 0; i < d.hist.size(); ++i)
    add(i, g * doc.counts[i] * (potential[i] - mean) / d.mass);
}

// A document's transports to each of its candidates in the metric: each one's value and
// iterations, and where `keep` what their gradient reads (the histograms, the costs and the
// plans; without, a candidate's buffers are freed before the next's).
struct Transports {
  Transports(const NcaProblem& p, const MappedWords& words, const WordMetric& m, const WordBag& doc,
             std::span<const std::uint32_t> candidates, bool keep)
      : a(map_document(p, words, m, doc)), near(p, words, a, candidates, m.out_dim) {
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      Mapped mb = weigh(p.docs[candidates[c]], m);
      std::vector<double> costs = near.costs(doc, a, c);
      EntropicTransport e = entropic_transport(a.hist, mb.hist, costs, p.transport);
      value.push_back(e.value);
      iterations += e.iterations;
      if (keep) {
        b.push_back(std::move(mb));
        cost.push_back(std::move(costs));
        t.push_back(std::move(e));
      }
    }
  }
  Mapped a;
  CandidateWords near;
  std::vector<double> value;
  std::size_t iterations = 0;
  std::vector<Mapped> b;
  std::vector<std::vector<double>> cost;
  std::vector<EntropicTransport> t;
};

class MappedCentroids {
 public:
  MappedCentroids(const NcaProblem& p, const WordMetric& m, std::span<const std::uint32_t> batch,
                  std::span<const std::vector<std::uint32_t>> candidates)
      : in_(m.in_dim), out_(m.out_dim), docs_(documents_of(p, batch, candidates)) {
    const std::vector<std::uint32_t>& docs = docs_.ids();
    x_.assign(docs.size() * in_, 0.0);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t k = 0; k < docs.size(); ++k) {
      const WordBag& doc = p.docs[docs[k]];
      double mass = 0;
      for (std::size_t i = 0; i < doc.words.size(); ++i)
        mass += m.weights[doc.words[i]] * doc.counts[i];
      double* c = x_.data() + k * in_;
      for (std::size_t i = 0; i < doc.words.size(); ++i) {
        const double h = m.weights[doc.words[i]] * doc.counts[i] / mass;
        const double* x = p.vectors.data() + std::size_t{doc.words[i]} * in_;
        for (std::size_t e = 0; e < in_; ++e) c[e] += h * x[e];
      }
    }
    y_.resize(docs.size() * out_);
    gemm(kN, kT, docs.size(), out_, in_, 1.0, x_.data(), m.map.data(), 0.0, y_.data());
  }
  const double* x(std::uint32_t doc) const { return x_.data() + docs_.slot(doc) * in_; }
  const double* y(std::uint32_t doc) const { return y_.data() + docs_.slot(doc) * out_; }
  // Every A c, a row each in the order the documents were first named.
  std::vector<double> images() && { return std::move(y_); }

 private:
  std::size_t in_, out_;
  FirstSeen docs_;
  std::vector<double> x_, y_;
};

// Two documents' centroid distance ||A u||, u = c_a - c_b, with u and A u for its gradient.
struct Centroids {
  double value = 0;
  std::vector<double> u, au;
};

Centroids centroid_distance(const MappedCentroids& c, std::uint32_t a, std::uint32_t b,
                            const WordMetric& m) {
  Centroids e;
  e.u.resize(m.in_dim);
  for (std::size_t q = 0; q < m.in_dim; ++q) e.u[q] = c.x(a)[q] - c.x(b)[q];
  e.au.resize(m.out_dim);
  double sq = 0;
  for (std::size_t r = 0; r < m.out_dim; ++r) {
    e.au[r] = c.y(a)[r] - c.y(b)[r];
    sq += e.au[r] * e.au[r];
  }
  e.value = std::sqrt(sq);
  return e;
}

// Each word's share of a centroid distance through its weight: (A x) . (A u) / D =
// x . back with back = A' A u / D (b's negated), so that no word need be mapped.
std::vector<double> centroid_shares(const NcaProblem& p, const WordBag& doc, const double* back,
                                    double sign) {
  std::vector<double> s(doc.words.size(), 0.0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double* x = p.vectors.data() + std::size_t{doc.words[i]} * p.in_dim;
    for (std::size_t q = 0; q < p.in_dim; ++q) s[i] += x[q] * back[q];
    s[i] *= sign;
  }
  return s;
}

// NCA's loss for a document of `label` from minus its distances to its candidates, and the
// loss's derivative by each distance; nothing counted where no candidate has its label.
struct Softmax {
  bool counted = false;
  double loss = 0;
  std::vector<double> gs;  // d loss / d D per candidate
};

Softmax nca_softmax(const NcaProblem& p, std::uint32_t label,
                    std::span<const std::uint32_t> candidates, const std::vector<double>& minus) {
  Softmax s;
  std::vector<double> same;
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (p.labels[candidates[c]] == label) same.push_back(minus[c]);
  if (same.empty()) return s;
  const double lse_all = log_sum_exp(minus), lse_same = log_sum_exp(same);
  s.counted = true;
  s.loss = lse_all - lse_same;
  s.gs.resize(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c)
    s.gs[c] = (p.labels[candidates[c]] == label ? std::exp(minus[c] - lse_same) : 0.0) -
              std::exp(minus[c] - lse_all);
  return s;
}

// A batch document's part of the loss and of its gradient, all of it computed by one thread:
// the batch adds the parts in its order, so that its sums are the same bits whatever the
// threads, and no thread waits on another within a document.
struct DocumentShare {
  bool counted = false;  // it has a candidate of its class
  double loss = 0;
  std::size_t transports = 0, iterations = 0;
  double distance_seconds = 0, gradient_seconds = 0;  // its thread's
  // d loss / d weight, and (transport) M's squares' terms, by vocabulary word (one may recur).
  std::vector<std::pair<std::uint32_t, double>> weights, squares;
  // Transport: the document's vectors X_a and Z = sum over its candidates of S X_b (words x
  // in_dim each): M's cross term is X_a' Z.
  std::vector<double> x, z;
  // Centroid: each pair's (g / D) A u and u, a row each: their product is its share of A M.
  std::vector<double> scaled_au, pair_u;
};

DocumentShare transport_share(const NcaProblem& p, const MappedWords& words, const WordMetric& m,
                              std::uint32_t doc, std::span<const std::uint32_t> cand,
                              bool gradient) {
  DocumentShare s;
  Stopwatch watch(&s.distance_seconds);
  const WordBag& a = p.docs[doc];
  Transports tr(p, words, m, a, cand, gradient);
  std::vector<double> minus(cand.size());
  for (std::size_t c = 0; c < cand.size(); ++c) minus[c] = -tr.value[c];
  s.transports = cand.size();
  s.iterations = tr.iterations;
  watch.charge_to(&s.gradient_seconds);
  const Softmax sm = nca_softmax(p, p.labels[doc], cand, minus);
  s.counted = sm.counted;
  s.loss = sm.loss;
  if (sm.counted && gradient) {
    // Per word of a and of the candidates' words (CandidateWords' places): the weights' terms,
    // the squares' (sum of s_ij = g T_ij / C_ij over the pairs it is in; a word against
    // itself, C = 0 under every map, has none), and S gathered into a's words x theirs.
    const std::size_t na = a.words.size(), nn = tr.near.size(), in = m.in_dim;
    std::vector<double> a_weights(na, 0.0), a_squares(na, 0.0), near_weights(nn, 0.0),
        near_squares(nn, 0.0), gathered(na * nn, 0.0);
    for (std::size_t c = 0; c < cand.size(); ++c) {
      const WordBag& b = p.docs[cand[c]];
      const std::vector<std::uint32_t>& at = tr.near.slots(c);
      const double g = sm.gs[c];
      weight_terms(a, tr.a, tr.t[c].alpha, g, [&](std::size_t i, double v) { a_weights[i] += v; });
      weight_terms(b, tr.b[c], tr.t[c].beta, g,
                   [&](std::size_t j, double v) { near_weights[at[j]] += v; });
      const std::size_t nb = b.words.size();
      const double* plan = tr.t[c].plan.data();
      const double* cost = tr.cost[c].data();
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j)
          if (const double cij = cost[i * nb + j]; cij != 0) {
            const double sij = g * plan[i * nb + j] / cij;
            a_squares[i] += sij;
            near_squares[at[j]] += sij;
            gathered[i * nn + at[j]] += sij;
          }
    }
    s.z.resize(na * in);
    gemm(kN, kN, na, in, nn, 1.0, gathered.data(), tr.near.vectors(p).data(), 0.0, s.z.data());
    s.x = std::move(tr.a.x);
    for (std::size_t i = 0; i < na; ++i) {
      s.weights.emplace_back(a.words[i], a_weights[i]);
      s.squares.emplace_back(a.words[i], a_squares[i]);
    }
    for (std::size_t w = 0; w < nn; ++w) {
      s.weights.emplace_back(tr.near.word(w), near_weights[w]);
      s.squares.emplace_back(tr.near.word(w), near_squares[w]);
    }
  }
  watch.charge_to(&s.gradient_seconds);
  return s;
}

DocumentShare centroid_share(const NcaProblem& p, const MappedCentroids& centroids,
                             const WordMetric& m, std::uint32_t doc,
                             std::span<const std::uint32_t> cand, bool gradient) {
  DocumentShare s;
  Stopwatch watch(&s.distance_seconds);
  const std::size_t nc = cand.size(), in = m.in_dim, out = m.out_dim;
  std::vector<Centroids> cd(nc);
  std::vector<double> minus(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    cd[c] = centroid_distance(centroids, doc, cand[c], m);
    minus[c] = -cd[c].value;
  }
  watch.charge_to(&s.gradient_seconds);
  const Softmax sm = nca_softmax(p, p.labels[doc], cand, minus);
  s.counted = sm.counted;
  s.loss = sm.loss;
  if (sm.counted && gradient) {
    // d D / d A = A u u' / D; through the weights, each word's share: A' A u / D for every
    // pair in one product (0 where D is), then a dot product a word.
    const WordBag& a = p.docs[doc];
    const Mapped ma = weigh(a, m);
    std::vector<double> unit_au(nc * out, 0.0), back(nc * in);
    for (std::size_t c = 0; c < nc; ++c)
      if (cd[c].value > 0)
        for (std::size_t r = 0; r < out; ++r) unit_au[c * out + r] = cd[c].au[r] / cd[c].value;
    gemm(kN, kN, nc, in, out, 1.0, unit_au.data(), m.map.data(), 0.0, back.data());
    for (std::size_t c = 0; c < nc; ++c) {
      const Centroids& e = cd[c];
      if (e.value == 0) continue;  // the same centroid under every map
      const double g = sm.gs[c];
      for (const double x : e.au) s.scaled_au.push_back(g / e.value * x);
      s.pair_u.insert(s.pair_u.end(), e.u.begin(), e.u.end());
      const WordBag& b = p.docs[cand[c]];
      const Mapped mb = weigh(b, m);
      weight_terms(a, ma, centroid_shares(p, a, back.data() + c * in, 1.0), g,
                   [&](std::size_t i, double v) { s.weights.emplace_back(a.words[i], v); });
      weight_terms(b, mb, centroid_shares(p, b, back.data() + c * in, -1.0), g,
                   [&](std::size_t j, double v) { s.weights.emplace_back(b.words[j], v); });
    }
  }
  watch.charge_to(&s.gradient_seconds);
  return s;
}

// Each share's `part` (rows of one width), one after another in the batch's order.
template <typename Part>
std::vector<double> stacked(const std::vector<DocumentShare>& shares, Part part) {
  std::size_t size = 0;
  for (const DocumentShare& s : shares) size += (s.*part).size();
  std::vector<double> all;
  all.reserve(size);
  for (const DocumentShare& s : shares) all.insert(all.end(), (s.*part).begin(), (s.*part).end());
  return all;
}

}  // namespace

std::vector<std::vector<double>> nca_distances(
    const NcaProblem& p, const WordMetric& metric, std::span<const std::uint32_t> batch,
    std::span<const std::vector<std::uint32_t>> candidates, NcaWork* work) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<double>> result(batch.size());
  std::vector<std::size_t> iterations(batch.size(), 0);
  if (p.distance == NcaDistance::centroid) {
    const MappedCentroids centroids(p, metric, batch, candidates);
    for (std::size_t k = 0; k < batch.size(); ++k)
      for (const std::uint32_t b : candidates[k])
        result[k].push_back(centroid_distance(centroids, batch[k], b, metric).value);
    if (work) work->distance_seconds += seconds_since(start);
    return result;
  }
  const MappedWords words(p, metric, batch, candidates);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < batch.size(); ++k) {
    Transports tr(p, words, metric, p.docs[batch[k]], candidates[k], false);
    result[k] = std::move(tr.value);
    iterations[k] = tr.iterations;
  }
  if (work) {
    for (std::size_t k = 0; k < batch.size(); ++k) {
      work->transports += candidates[k].size();
      work->iterations += iterations[k];
    }
    work->distance_seconds += seconds_since(start);
  }
  return result;
}

std::vector<double> mapped_centroids(const NcaProblem& p, const WordMetric& metric) {
  std::vector<std::uint32_t> all(p.docs.size());
  std::iota(all.begin(), all.end(), 0u);
  const std::vector<std::vector<std::uint32_t>> none(all.size());
  return MappedCentroids(p, metric, all, none).images();
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
    const Mapped ma = map_document(p, words, metric, a);
    const std::vector<double> c =
        CandidateWords(p, words, ma, as_candidates[k], metric.out_dim).costs(a, ma, 0);
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
  auto start = std::chrono::steady_clock::now();
  // Transport's costs need the words mapped, the centroid distance the documents' centroids:
  // each once for the batch, one product.
  std::optional<MappedWords> words;
  std::optional<MappedCentroids> centroids;
  if (by_centroid)
    centroids.emplace(p, metric, batch, candidates);
  else
    words.emplace(p, metric, batch, candidates);
  v.work.distance_seconds += seconds_since(start);
  // A document a thread; the wall time shared out between distances and gradient as the
  // threads' time was.
  start = std::chrono::steady_clock::now();
  std::vector<DocumentShare> shares(batch.size());
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < batch.size(); ++k)
    shares[k] = by_centroid
                    ? centroid_share(p, *centroids, metric, batch[k], candidates[k], gradient)
                    : transport_share(p, *words, metric, batch[k], candidates[k], gradient);
  double distance = 0, rest = 0;
  for (const DocumentShare& s : shares) {
    distance += s.distance_seconds;
    rest += s.gradient_seconds;
  }
  const double wall = seconds_since(start),
               part = distance + rest > 0 ? distance / (distance + rest) : 1;
  v.work.distance_seconds += wall * part;
  v.work.gradient_seconds += wall * (1 - part);
  start = std::chrono::steady_clock::now();
  // The batch's sums, in its order.
  std::vector<double> squares;
  if (gradient) {
    v.grad_weights.assign(metric.weights.size(), 0.0);
    squares.assign(metric.weights.size(), 0.0);
  }
  for (const DocumentShare& s : shares) {
    v.work.transports += s.transports;
    v.work.iterations += s.iterations;
    if (!s.counted) continue;
    v.loss += s.loss;
    ++v.documents;
    for (const auto& [word, term] : s.weights) v.grad_weights[word] += term;
    for (const auto& [word, term] : s.squares) squares[word] += term;
  }
  if (v.documents > 0) {
    const double scale = 1.0 / static_cast<double>(v.documents);
    v.loss *= scale;
    if (gradient) {
      v.grad_map.assign(out * in, 0.0);
      if (by_centroid) {
        const std::vector<double> scaled_au = stacked(shares, &DocumentShare::scaled_au),
                                  pair_u = stacked(shares, &DocumentShare::pair_u);
        gemm(kT, kN, out, in, scaled_au.size() / std::max<std::size_t>(out, 1), scale,
             scaled_au.data(), pair_u.data(), 0.0, v.grad_map.data());
      } else {
        // M = sum_u squares_u x_u x_u' - cross - cross', cross = the documents' X_a' Z
        // stacked (one product), the squares over the words that have one; A M.
        const std::vector<double> x = stacked(shares, &DocumentShare::x),
                                  z = stacked(shares, &DocumentShare::z);
        std::vector<double> cross(in * in, 0.0);
        gemm(kT, kN, in, in, x.size() / std::max<std::size_t>(in, 1), 1.0, x.data(), z.data(), 0.0,
             cross.data());
        std::vector<double> xs, ws;
        std::size_t used = 0;
        for (std::size_t u = 0; u < squares.size(); ++u) {
          if (squares[u] == 0) continue;
          const double* row = p.vectors.data() + u * in;
          xs.insert(xs.end(), row, row + in);
          for (std::size_t e = 0; e < in; ++e) ws.push_back(squares[u] * row[e]);
          ++used;
        }
        std::vector<double> m(in * in, 0.0);
        gemm(kT, kN, in, in, used, 1.0, ws.data(), xs.data(), 0.0, m.data());
        for (std::size_t r = 0; r < in; ++r)
          for (std::size_t e = 0; e < in; ++e)
            m[r * in + e] -= cross[r * in + e] + cross[e * in + r];
        gemm(kN, kN, out, in, in, scale, metric.map.data(), m.data(), 0.0, v.grad_map.data());
      }
      for (double& g : v.grad_weights) g *= scale;
    }
  }
  v.work.gradient_seconds += seconds_since(start);
  return v;
}

}  // namespace lcrwmd
