// learn_metric (learn/learn_metric.h): Adam's steps on the map and the weights over shuffled
// batches, the candidates found again by centroid distance each epoch, the best held-out
// metric kept.
#include "learn/learn_metric.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "lcrwmd/error.h"

namespace lcrwmd {
namespace {

// Adam (Kingma and Ba) on one block of parameters.
class Adam {
 public:
  Adam(std::size_t n, double rate) : rate_(rate), m_(n, 0.0), v_(n, 0.0) {}
  void step(std::vector<double>& x, const std::vector<double>& g) {
    ++t_;
    const double c1 = 1 - std::pow(kBeta1, static_cast<double>(t_)),
                 c2 = 1 - std::pow(kBeta2, static_cast<double>(t_));
    for (std::size_t i = 0; i < x.size(); ++i) {
      m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * g[i];
      v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * g[i] * g[i];
      x[i] -= rate_ * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + 1e-8);
    }
  }

 private:
  static constexpr double kBeta1 = 0.9, kBeta2 = 0.999;
  double rate_;
  std::size_t t_ = 0;
  std::vector<double> m_, v_;
};

// For each document of `from`, its `k` nearest of `pool` (itself left out) by the distance of
// their mapped centroids `c` (n x out: mapped_centroids), nearest first (ties: the smaller id).
std::vector<std::vector<std::uint32_t>> nearest(const std::vector<double>& c, std::size_t out,
                                                const std::vector<std::uint32_t>& from,
                                                const std::vector<std::uint32_t>& pool,
                                                std::size_t k) {
  std::vector<std::vector<std::uint32_t>> result(from.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t f = 0; f < from.size(); ++f) {
    const double* a = c.data() + std::size_t{from[f]} * out;
    std::vector<std::pair<double, std::uint32_t>> d;
    d.reserve(pool.size());
    for (const std::uint32_t b : pool) {
      if (b == from[f]) continue;
      const double* y = c.data() + std::size_t{b} * out;
      double sq = 0;
      for (std::size_t r = 0; r < out; ++r) sq += (a[r] - y[r]) * (a[r] - y[r]);
      d.emplace_back(sq, b);
    }
    const std::size_t keep = std::min(k, d.size());
    std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(keep), d.end());
    for (std::size_t i = 0; i < keep; ++i) result[f].push_back(d[i].second);
  }
  return result;
}

// NCA's vote: the label with the most softmax mass over the candidates.
double held_out_error(const NcaProblem& p, const WordMetric& m,
                      const std::vector<std::uint32_t>& held,
                      const std::vector<std::vector<std::uint32_t>>& cand, NcaWork& work) {
  if (held.empty()) return 0;
  const std::vector<std::vector<double>> d = nca_distances(p, m, held, cand, &work);
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < held.size(); ++k) {
    if (cand[k].empty()) {
      ++wrong;
      continue;
    }
    const double nearest = *std::min_element(d[k].begin(), d[k].end());
    std::map<std::uint32_t, double> mass;
    for (std::size_t c = 0; c < cand[k].size(); ++c)
      mass[p.labels[cand[k][c]]] += std::exp(nearest - d[k][c]);
    const auto best = std::max_element(
        mass.begin(), mass.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    wrong += best->first != p.labels[held[k]];
  }
  return static_cast<double>(wrong) / static_cast<double>(held.size());
}

// The transport's cost scale in the metric (LearnOptions::transport): the median, over up to
// 256 training documents spread over the set, of the largest word-to-word cost to the nearest
// other document by centroid; 1 where that is 0 (documents of one word each, the same).
double cost_scale(const NcaProblem& p, const WordMetric& m, const std::vector<double>& centroids,
                  const std::vector<std::uint32_t>& train) {
  constexpr std::size_t kSample = 256;
  const std::size_t step = std::max<std::size_t>(1, train.size() / kSample);
  std::vector<std::uint32_t> docs;
  for (std::size_t i = 0; i < train.size(); i += step) docs.push_back(train[i]);
  const std::vector<std::vector<std::uint32_t>> nearest_one =
      nearest(centroids, m.out_dim, docs, train, 1);
  std::vector<std::uint32_t> from, partners;
  for (std::size_t k = 0; k < docs.size(); ++k)
    if (!nearest_one[k].empty()) {
      from.push_back(docs[k]);
      partners.push_back(nearest_one[k][0]);
    }
  std::vector<double> largest = largest_costs(p, m, from, partners);
  if (largest.empty()) return 1.0;
  const auto mid = largest.begin() + static_cast<std::ptrdiff_t>(largest.size() / 2);
  std::nth_element(largest.begin(), mid, largest.end());
  return *mid > 0 ? *mid : 1.0;
}

// The start of the map: the identity, or for fewer rows than the vectors' dimension the
// vocabulary's principal directions (power iteration with deflation, in a fixed order).
std::vector<double> initial_map(const NcaProblem& p, std::size_t vocab, std::size_t out) {
  const std::size_t in = p.in_dim;
  std::vector<double> a(out * in, 0.0);
  if (out == in) {
    for (std::size_t k = 0; k < in; ++k) a[k * in + k] = 1.0;
    return a;
  }
  std::vector<double> mean(in, 0.0), cov(in * in, 0.0);
  for (std::size_t u = 0; u < vocab; ++u)
    for (std::size_t e = 0; e < in; ++e)
      mean[e] += p.vectors[u * in + e] / static_cast<double>(vocab);
  for (std::size_t u = 0; u < vocab; ++u)
    for (std::size_t r = 0; r < in; ++r)
      for (std::size_t e = 0; e < in; ++e)
        cov[r * in + e] += (p.vectors[u * in + r] - mean[r]) * (p.vectors[u * in + e] - mean[e]);
  for (std::size_t k = 0; k < out; ++k) {
    std::vector<double> x(in, 1.0 / std::sqrt(static_cast<double>(in))), y(in);
    x[k % in] += 1.0;  // away from any earlier direction
    double lambda = 0;
    for (int it = 0; it < 200; ++it) {
      for (std::size_t r = 0; r < in; ++r) {
        y[r] = 0;
        for (std::size_t e = 0; e < in; ++e) y[r] += cov[r * in + e] * x[e];
      }
      double norm = 0;
      for (const double v : y) norm += v * v;
      norm = std::sqrt(norm);
      if (norm == 0) break;
      for (std::size_t r = 0; r < in; ++r) x[r] = y[r] / norm;
      lambda = norm;
    }
    for (std::size_t e = 0; e < in; ++e) a[k * in + e] = x[e];
    for (std::size_t r = 0; r < in; ++r)  // deflate
      for (std::size_t e = 0; e < in; ++e) cov[r * in + e] -= lambda * x[r] * x[e];
  }
  return a;
}

}  // namespace

LearnedMetric learn_word_metric(NcaProblem p, std::size_t vocab, const LearnOptions& o,
                                const LearnCallback& progress) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = p.docs.size(), in = p.in_dim;
  if (p.labels.size() != n) throw Error("learn: a label for every document is needed");
  std::map<std::uint32_t, std::size_t> per_label;
  for (const std::uint32_t l : p.labels) ++per_label[l];
  if (per_label.size() < 2)
    throw Error("learn: the documents have " + std::to_string(per_label.size()) +
                " label; a metric is learned from two or more");
  if (!(o.held_out >= 0 && o.held_out < 1)) throw Error("learn: held_out must be in [0, 1)");
  if (o.batch == 0 || o.neighbors == 0 || o.patience == 0)
    throw Error("learn: batch, neighbors and patience must be at least 1");
  if (!(o.transport.lambda > 0) || !std::isfinite(o.transport.lambda))
    throw Error("learn: lambda (the transport's strength) must be positive and finite");
  const std::size_t out = o.out_dim == 0 ? in : o.out_dim;
  if (out > in)
    throw Error("learn: the map's dimension cannot exceed the vectors' (" + std::to_string(in) +
                ")");

  std::mt19937_64 rng(o.seed);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  const auto held_count = std::min(
      kMostHeldOut, static_cast<std::size_t>(std::llround(o.held_out * static_cast<double>(n))));
  LearnedMetric result;
  std::vector<std::uint32_t> held(order.begin(),
                                  order.begin() + static_cast<std::ptrdiff_t>(held_count)),
      train(order.begin() + static_cast<std::ptrdiff_t>(held_count), order.end());
  std::sort(held.begin(), held.end());
  std::sort(train.begin(), train.end());
  result.train_documents = train.size();
  result.held_out_documents = held.size();
  result.epoch_documents =
      o.epoch_documents > 0 ? std::min(o.epoch_documents, train.size()) : train.size();

  WordMetric m;
  m.in_dim = in;
  m.out_dim = out;
  m.map = initial_map(p, vocab, out);
  m.weights.assign(vocab, 1.0);
  p.transport = o.transport;

  result.metric = m;
  result.held_out_error = std::numeric_limits<double>::infinity();
  LearnWork& work = result.work;
  const auto seconds = [](std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  };
  // The current metric's mapped centroids: each epoch's candidates.
  std::vector<double> centroids;
  // NCA's vote over the held-out documents' candidates in `metric` (its mapped centroids `c`),
  // by the stage's distance (the transport's at the metric's own cost scale).
  const auto vote = [&](const WordMetric& metric, const std::vector<double>& c) {
    const auto t = std::chrono::steady_clock::now();
    const double training_lambda = p.transport.lambda;
    if (p.distance == NcaDistance::transport)
      p.transport.lambda = o.transport.lambda / cost_scale(p, metric, c, train);
    NcaWork w;
    const double error =
        held_out_error(p, metric, held, nearest(c, metric.out_dim, held, train, o.neighbors), w);
    p.transport.lambda = training_lambda;
    work.transports += w.transports;
    work.sinkhorn_iterations += w.iterations;
    work.held_out_seconds += seconds(t);
    return error;
  };
  // The unsupervised metric, which each stage's vote measures too: where the map keeps the
  // vectors' dimension it may be kept, so that the metric written is never worse on the
  // held-out documents than none.
  const WordMetric identity = WordMetric::identity(in, vocab);
  for (const NcaDistance stage : {NcaDistance::centroid, NcaDistance::transport}) {
    p.distance = stage;
    const std::size_t epochs =
        stage == NcaDistance::centroid ? o.centroid_epochs : o.transport_epochs;
    Adam adam_map(m.map.size(), o.map_rate), adam_weights(m.weights.size(), o.weight_rate);
    // The stage starts from the best metric so far, its held-out error measured anew by the
    // stage's vote, and the identity's beside it.
    m = result.metric;
    centroids = mapped_centroids(p, m);
    double scale = std::numeric_limits<double>::quiet_NaN();
    const auto rescale = [&] {
      if (stage == NcaDistance::centroid) return;
      const auto t = std::chrono::steady_clock::now();
      scale = cost_scale(p, m, centroids, train);
      p.transport.lambda = o.transport.lambda / scale;
      work.candidates_seconds += seconds(t);
    };
    rescale();
    if (epochs > 0 && !held.empty()) {
      result.held_out_error = vote(m, centroids);
      result.unsupervised_error = vote(identity, mapped_centroids(p, identity));
      if (out == in && result.unsupervised_error < result.held_out_error) {
        result.metric = identity;
        result.held_out_error = result.unsupervised_error;
      }
    }
    std::size_t since_best = 0;
    for (std::size_t epoch = 1; epoch <= epochs; ++epoch) {
      if (epoch > 1) rescale();
      // The epoch's documents: every training document, or a fresh sample of them.
      std::vector<std::uint32_t> docs = train;
      if (result.epoch_documents < docs.size()) {
        std::shuffle(docs.begin(), docs.end(), rng);
        docs.resize(result.epoch_documents);
        std::sort(docs.begin(), docs.end());
      }
      const auto t = std::chrono::steady_clock::now();
      const std::vector<std::vector<std::uint32_t>> cand =
          nearest(centroids, out, docs, train, o.neighbors);
      work.candidates_seconds += seconds(t);
      std::vector<std::size_t> batches(docs.size());
      std::iota(batches.begin(), batches.end(), std::size_t{0});
      std::shuffle(batches.begin(), batches.end(), rng);
      double loss = 0;
      std::size_t counted = 0;
      const char* name = stage == NcaDistance::centroid ? "centroid" : "transport";
      const std::size_t batch_count = (batches.size() + o.batch - 1) / o.batch;
      const auto mean_loss = [&] { return counted ? loss / static_cast<double>(counted) : 0.0; };
      for (std::size_t first = 0, b = 1; first < batches.size(); first += o.batch, ++b) {
        std::vector<std::uint32_t> batch;
        std::vector<std::vector<std::uint32_t>> bc;
        for (std::size_t i = first; i < std::min(batches.size(), first + o.batch); ++i) {
          batch.push_back(docs[batches[i]]);
          bc.push_back(cand[batches[i]]);
        }
        const NcaValue v = nca_objective(p, m, batch, bc, true);
        work.transports += v.work.transports;
        work.sinkhorn_iterations += v.work.iterations;
        work.distance_seconds += v.work.distance_seconds;
        work.gradient_seconds += v.work.gradient_seconds;
        const auto step = std::chrono::steady_clock::now();
        if (v.documents > 0) {
          loss += v.loss * static_cast<double>(v.documents);
          counted += v.documents;
          adam_map.step(m.map, v.grad_map);
          adam_weights.step(m.weights, v.grad_weights);
          for (double& w : m.weights) w = std::max(w, 1e-3);  // a weight stays positive
        }
        work.gradient_seconds += seconds(step);
        if (b < batch_count && progress &&
            !progress({name, epoch, b, batch_count, mean_loss(),
                       std::numeric_limits<double>::quiet_NaN(), seconds(start), scale, work})) {
          result.stopped = true;
          return result;
        }
      }
      centroids = mapped_centroids(p, m);
      const double error = held.empty() ? 0 : vote(m, centroids);
      const bool better = held.empty() || error < result.held_out_error;
      if (better) {
        result.metric = m;
        result.held_out_error = error;
        since_best = 0;
      } else {
        ++since_best;
      }
      if (progress && !progress({name, epoch, batch_count, batch_count, mean_loss(), error,
                                 seconds(start), scale, work})) {
        result.stopped = true;
        return result;
      }
      if (since_best >= o.patience) break;
    }
  }
  return result;
}

}  // namespace lcrwmd
