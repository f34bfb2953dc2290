// Metric learning's numerics: entropic transport (its marginals, its value's gradient is its
// plan, and near the exact EMD for a large strength) and S-WMD's loss, on transport and on
// centroids, whose gradient for the map and for the word weights is checked against central
// finite differences in double; and a
// few gradient steps on a toy set whose labels depend on one direction of the word space find
// that direction; and one thread or two give the same bits.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "lcrwmd/cpu.h"
#include "lcrwmd/emd.h"
#include "learn/entropic_transport.h"
#include "learn/nca_objective.h"

namespace lcrwmd {
namespace {

std::vector<double> histogram(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.1, 1.0);
  std::vector<double> h(n);
  double s = 0;
  for (double& x : h) s += x = u(rng);
  for (double& x : h) x /= s;
  return h;
}

std::vector<double> random_costs(std::size_t n, std::size_t m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 2.0);
  std::vector<double> c(n * m);
  for (double& x : c) x = u(rng);
  return c;
}

TEST(EntropicTransport, MarginalsHoldAndTheValuesGradientIsThePlan) {
  std::mt19937 rng(5);
  for (const auto& [n, m] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 4}, {5, 3}, {7, 9}}) {
    const std::vector<double> a = histogram(n, rng), b = histogram(m, rng);
    std::vector<double> c = random_costs(n, m, rng);
    EntropicOptions o;
    o.lambda = 4;
    o.tolerance = 1e-12;
    const EntropicTransport t = entropic_transport(a, b, c, o);
    ASSERT_LE(t.marginal_error, 1e-12);
    for (std::size_t i = 0; i < n; ++i) {
      double row = 0;
      for (std::size_t j = 0; j < m; ++j) row += t.plan[i * m + j];
      EXPECT_NEAR(row, a[i], 1e-11);
    }
    for (std::size_t j = 0; j < m; ++j) {
      double col = 0;
      for (std::size_t i = 0; i < n; ++i) col += t.plan[i * m + j];
      EXPECT_NEAR(col, b[j], 1e-11);
    }
    // The primal value, from the plan, is the dual one.
    double primal = 0;
    for (std::size_t e = 0; e < n * m; ++e)
      primal += t.plan[e] * c[e] + t.plan[e] * (std::log(t.plan[e]) - 1) / o.lambda;
    EXPECT_NEAR(primal, t.value, 1e-10);
    for (std::size_t e = 0; e < n * m; ++e) {
      const double h = 1e-6, keep = c[e];
      c[e] = keep + h;
      const double up = entropic_transport(a, b, c, o).value;
      c[e] = keep - h;
      const double down = entropic_transport(a, b, c, o).value;
      c[e] = keep;
      EXPECT_NEAR((up - down) / (2 * h), t.plan[e], 1e-7) << n << "x" << m << " entry " << e;
    }
  }
}

// A constant added to a row or a column moves the value by it times that side's mass and leaves
// the plan: a row's by the kernel's shift, a column's far enough that the kernel vanishes there
// by the log domain the iterations then fall back to.
TEST(EntropicTransport, ShiftedRowsAndVanishingColumnsGiveTheSamePlan) {
  std::mt19937 rng(11);
  const std::vector<double> a = histogram(5, rng), b = histogram(7, rng);
  const std::vector<double> c = random_costs(5, 7, rng);
  EntropicOptions o;
  o.lambda = 4;
  o.tolerance = 1e-13;
  const EntropicTransport base = entropic_transport(a, b, c, o);
  for (const bool row : {true, false}) {
    std::vector<double> shifted = c;
    const double by = row ? 80.0 : 500.0;  // lambda x 500: exp(-2000) is 0 in double
    for (std::size_t k = 0; k < (row ? 7u : 5u); ++k) shifted[row ? 2 * 7 + k : k * 7 + 3] += by;
    const EntropicTransport t = entropic_transport(a, b, shifted, o);
    EXPECT_NEAR(t.value, base.value + by * (row ? a[2] : b[3]), 1e-9) << row;
    for (std::size_t e = 0; e < c.size(); ++e) EXPECT_NEAR(t.plan[e], base.plan[e], 1e-10) << row;
  }
}

TEST(EntropicTransport, ApproachesTheExactTransportAsItsStrengthGrows) {
  std::mt19937 rng(9);
  const std::vector<double> a = histogram(6, rng), b = histogram(8, rng);
  const std::vector<double> c = random_costs(6, 8, rng);
  const double exact = emd(a, b, c);
  double last_gap = std::numeric_limits<double>::infinity();
  for (const double lambda : {2.0, 20.0, 200.0}) {
    EntropicOptions o;
    o.lambda = lambda;
    o.max_iterations = 100000;
    const EntropicTransport t = entropic_transport(a, b, c, o);
    double cost = 0;
    for (std::size_t e = 0; e < c.size(); ++e) cost += t.plan[e] * c[e];
    EXPECT_GE(cost, exact - 1e-6);
    EXPECT_LT(cost - exact, last_gap);
    last_gap = cost - exact;
  }
  EXPECT_LT(last_gap, 0.02);
}

// A random problem: document d has 1 + d % most_words distinct words (counts 1 to most_count)
// and label d % labels; by default small: 8 documents of 1 to 4 words over a vocabulary of 12,
// two labels.
struct ToyShape {
  std::size_t vocab = 12, in = 4, docs = 8, most_words = 4, most_count = 3, labels = 2;
};

struct Toy {
  std::size_t vocab, in;
  std::vector<double> vectors;
  std::vector<WordBag> docs;
  std::vector<std::uint32_t> labels;
  explicit Toy(std::uint32_t seed, const ToyShape& shape = {}) : vocab(shape.vocab), in(shape.in) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    vectors.resize(vocab * in);
    for (double& x : vectors) x = g(rng);
    for (std::size_t d = 0; d < shape.docs; ++d) {
      WordBag bag;
      const std::size_t n = 1 + d % shape.most_words;
      while (bag.words.size() < n) {
        const auto w = static_cast<std::uint32_t>(rng() % vocab);
        if (std::find(bag.words.begin(), bag.words.end(), w) != bag.words.end()) continue;
        bag.words.push_back(w);
        bag.counts.push_back(1 + static_cast<double>(rng() % shape.most_count));
      }
      docs.push_back(bag);
      labels.push_back(static_cast<std::uint32_t>(d % shape.labels));
    }
  }
  // A map to `out` dimensions and weights away from 1, drawn from `seed`.
  WordMetric random_metric(std::size_t out, std::uint32_t seed) const {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    WordMetric m;
    m.in_dim = in;
    m.out_dim = out;
    m.map.resize(m.out_dim * m.in_dim);
    for (double& x : m.map) x = g(rng);
    m.weights.resize(vocab);
    for (double& w : m.weights) w = 0.5 + std::fabs(g(rng));
    return m;
  }
  NcaProblem problem(double lambda) const {
    NcaProblem p;
    p.vectors = vectors;
    p.in_dim = in;
    p.docs = docs;
    p.labels = labels;
    p.transport.lambda = lambda;
    p.transport.tolerance = 1e-13;
    p.transport.max_iterations = 100000;
    return p;
  }
};

TEST(NcaObjective, GradientsMatchCentralDifferences) {
  for (const std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    const Toy toy(seed);
    NcaProblem p = toy.problem(3.0);
    if (seed > 2) p.distance = NcaDistance::centroid;
    const WordMetric m = toy.random_metric(3, seed + 10);  // not square
    const std::vector<std::uint32_t> batch = {0, 3, 6};
    std::vector<std::vector<std::uint32_t>> cand(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k)
      for (std::uint32_t d = 0; d < toy.docs.size(); ++d)
        if (d != batch[k]) cand[k].push_back(d);
    const NcaValue v = nca_objective(p, m, batch, cand, true);
    ASSERT_EQ(v.documents, batch.size());
    ASSERT_GT(v.loss, 0);
    const auto loss_at = [&](const WordMetric& at) {
      return nca_objective(p, at, batch, cand, false).loss;
    };
    const double h = 1e-6;
    for (std::size_t e = 0; e < m.map.size(); ++e) {
      WordMetric up = m, down = m;
      up.map[e] += h;
      down.map[e] -= h;
      const double fd = (loss_at(up) - loss_at(down)) / (2 * h);
      EXPECT_NEAR(v.grad_map[e], fd, 1e-6 + 1e-5 * std::fabs(fd)) << seed << " map " << e;
    }
    std::size_t moved = 0;
    for (std::size_t u = 0; u < toy.vocab; ++u) {
      WordMetric up = m, down = m;
      up.weights[u] += h;
      down.weights[u] -= h;
      const double fd = (loss_at(up) - loss_at(down)) / (2 * h);
      EXPECT_NEAR(v.grad_weights[u], fd, 1e-6 + 1e-5 * std::fabs(fd)) << seed << " weight " << u;
      moved += std::fabs(fd) > 1e-4;
    }
    EXPECT_GT(moved, 2u);  // the weights matter, so the check above could fail
  }
}

TEST(NcaObjective, ADocumentWithoutACandidateOfItsClassAddsNothing) {
  const Toy toy(3);
  const NcaProblem p = toy.problem(3.0);
  const WordMetric m = WordMetric::identity(toy.in, toy.vocab);
  const std::vector<std::uint32_t> batch = {0};
  const std::vector<std::vector<std::uint32_t>> other = {{1, 3, 5}};  // label 1 only
  const NcaValue v = nca_objective(p, m, batch, other, true);
  EXPECT_EQ(v.documents, 0u);
  EXPECT_EQ(v.loss, 0);
}

// Two classes told apart by the first coordinate alone, the others noise twice as large: plain
// gradient steps on the map lower the loss and stretch the first coordinate against the rest.
TEST(NcaObjective, GradientStepsFindTheDirectionTheLabelsDependOn) {
  std::mt19937 rng(4);
  std::normal_distribution<double> g;
  const std::size_t in = 3, vocab = 40;
  std::vector<double> vectors(vocab * in);
  for (std::size_t u = 0; u < vocab; ++u) {
    vectors[u * in] = (u % 2 ? 1.0 : -1.0) * (0.5 + 0.2 * std::fabs(g(rng)));
    for (std::size_t e = 1; e < in; ++e) vectors[u * in + e] = 2.0 * g(rng);
  }
  std::vector<WordBag> docs;
  std::vector<std::uint32_t> labels;
  for (std::size_t d = 0; d < 24; ++d) {
    WordBag bag;
    for (std::size_t i = 0; i < 3; ++i) {
      const auto w = static_cast<std::uint32_t>(2 * ((d * 3 + i) % (vocab / 2)) + d % 2);
      bag.words.push_back(w);
      bag.counts.push_back(1);
    }
    docs.push_back(bag);
    labels.push_back(static_cast<std::uint32_t>(d % 2));
  }
  NcaProblem p;
  p.vectors = vectors;
  p.in_dim = in;
  p.docs = docs;
  p.labels = labels;
  p.transport.lambda = 5;
  std::vector<std::uint32_t> batch;
  std::vector<std::vector<std::uint32_t>> cand;
  for (std::uint32_t d = 0; d < docs.size(); ++d) {
    batch.push_back(d);
    cand.emplace_back();
    for (std::uint32_t e = 0; e < docs.size(); ++e)
      if (e != d) cand.back().push_back(e);
  }
  WordMetric m = WordMetric::identity(in, vocab);
  const auto stretch = [&] {  // |A e_0| / mean |A e_k|, k > 0
    double norms[3] = {0, 0, 0};
    for (std::size_t c = 0; c < in; ++c)
      for (std::size_t r = 0; r < in; ++r) norms[c] += m.map[r * in + c] * m.map[r * in + c];
    return std::sqrt(norms[0]) / ((std::sqrt(norms[1]) + std::sqrt(norms[2])) / 2);
  };
  const double first = nca_objective(p, m, batch, cand, false).loss;
  EXPECT_DOUBLE_EQ(stretch(), 1.0);
  for (int step = 0; step < 40; ++step) {
    const NcaValue v = nca_objective(p, m, batch, cand, true);
    for (std::size_t e = 0; e < m.map.size(); ++e) m.map[e] -= 0.3 * v.grad_map[e];
  }
  const double last = nca_objective(p, m, batch, cand, false).loss;
  EXPECT_LT(last, 0.7 * first) << first << " -> " << last;
  EXPECT_GT(stretch(), 2.0);
}

// A batch's documents are shared among the threads: one thread or two give the same bits, for
// either distance, on a problem large enough that each thread takes several documents of
// uneven size (and a candidate list of another class only, which counts nothing).
TEST(NcaObjective, TheSameBitsWhateverTheThreads) {
  const Toy toy(21,
                {.vocab = 90, .in = 7, .docs = 40, .most_words = 23, .most_count = 4, .labels = 3});
  NcaProblem p = toy.problem(2.0);
  const WordMetric m = toy.random_metric(5, 22);
  std::vector<std::uint32_t> batch;
  std::vector<std::vector<std::uint32_t>> cand;
  for (std::uint32_t d = 0; d < 24; ++d) {
    batch.push_back(d);
    cand.emplace_back();
    for (std::uint32_t e = 0; e < toy.docs.size(); ++e)
      if (e != d && (d != 5 || toy.labels[e] != toy.labels[d]) && (e * 7 + d) % 5 != 0)
        cand.back().push_back(e);
  }
  const int threads = omp_get_max_threads();
  for (const NcaDistance distance : {NcaDistance::transport, NcaDistance::centroid}) {
    p.distance = distance;
    set_threads(1);
    const NcaValue one = nca_objective(p, m, batch, cand, true);
    set_threads(2);
    const NcaValue two = nca_objective(p, m, batch, cand, true);
    set_threads(threads);
    EXPECT_EQ(one.documents, batch.size() - 1);
    EXPECT_EQ(one.loss, two.loss);
    EXPECT_EQ(one.grad_map, two.grad_map);
    EXPECT_EQ(one.grad_weights, two.grad_weights);
    EXPECT_EQ(one.work.transports, two.work.transports);
  }
}

}  // namespace
}  // namespace lcrwmd
