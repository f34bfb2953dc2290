// Learning a metric: on a set whose labels depend on one direction of the word space, the
// learned metric's held-out error falls below the unsupervised one's; the same seed gives the
// same metric, whatever the threads; what cannot be learned from is refused; a stop keeps the best
// so far.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "learn/learn_metric.h"

namespace lcrwmd {
namespace {

// Words on a line of four dimensions: the first coordinate's sign says the word's class, the
// other three are noise five times as large. A document: five words, most of its class.
struct LabelledSet {
  std::size_t vocab = 60, in = 4;
  std::vector<double> vectors;
  std::vector<WordBag> docs;
  std::vector<std::uint32_t> labels;
  explicit LabelledSet(std::size_t n, std::uint32_t seed = 7) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    vectors.resize(vocab * in);
    for (std::size_t u = 0; u < vocab; ++u) {
      vectors[u * in] = (u % 2 ? 0.6 : -0.6) + 0.2 * g(rng);
      for (std::size_t e = 1; e < in; ++e) vectors[u * in + e] = 3.0 * g(rng);
    }
    for (std::size_t d = 0; d < n; ++d) {
      const auto label = static_cast<std::uint32_t>(d % 2);
      WordBag bag;
      while (bag.words.size() < 5) {
        const bool own = rng() % 5 != 0;  // one word in five from the other class
        const auto w =
            static_cast<std::uint32_t>(2 * (rng() % (vocab / 2)) + (own ? label : 1 - label));
        if (std::find(bag.words.begin(), bag.words.end(), w) != bag.words.end()) continue;
        bag.words.push_back(w);
        bag.counts.push_back(1 + static_cast<double>(rng() % 2));
      }
      docs.push_back(bag);
      labels.push_back(label);
    }
  }
  NcaProblem problem() const {
    NcaProblem p;
    p.vectors = vectors;
    p.in_dim = in;
    p.docs = docs;
    p.labels = labels;
    return p;
  }
};

LearnOptions quick() {
  LearnOptions o;
  o.centroid_epochs = 15;
  o.transport_epochs = 3;
  o.batch = 16;
  o.neighbors = 12;
  o.held_out = 0.3;
  o.patience = 15;
  o.map_rate = 0.05;
  o.transport.lambda = 5;
  o.transport.tolerance = 1e-6;
  return o;
}

TEST(LearnMetric, LowersTheHeldOutErrorWhereTheLabelsFollowADirection) {
  const LabelledSet s(200);
  std::vector<LearnProgress> seen;
  const LearnedMetric r =
      learn_word_metric(s.problem(), s.vocab, quick(), [&](const LearnProgress& p) {
        seen.push_back(p);
        return true;
      });
  EXPECT_EQ(r.train_documents + r.held_out_documents, 200u);
  EXPECT_EQ(r.held_out_documents, 60u);
  ASSERT_FALSE(seen.empty());
  EXPECT_STREQ(seen.front().stage, "centroid");
  EXPECT_STREQ(seen.back().stage, "transport");
  // A report after every batch; the held-out error only at an epoch's end.
  std::size_t ends = 0;
  for (const LearnProgress& p : seen) {
    ASSERT_LE(p.batch, p.batches);
    EXPECT_EQ(std::isnan(p.held_out_error), !p.epoch_done());
    ends += p.epoch_done();
  }
  EXPECT_GT(seen.size(), ends);
  // The unsupervised metric's held-out error: zero epochs of either stage.
  LearnOptions none = quick();
  none.centroid_epochs = 0;
  none.transport_epochs = 1;
  none.map_rate = none.weight_rate = 0;
  const LearnedMetric start = learn_word_metric(s.problem(), s.vocab, none);
  EXPECT_LT(r.held_out_error, start.held_out_error - 0.05)
      << start.held_out_error << " -> " << r.held_out_error;
  // The identity is measured by the same (last) vote, and never beats the metric kept.
  EXPECT_EQ(r.unsupervised_error, start.held_out_error);
  EXPECT_LE(r.held_out_error, r.unsupervised_error);
  // Learned to the end (nothing held out, the last metric kept): the first coordinate
  // stretched against the noise.
  LearnOptions all = quick();
  all.held_out = 0;
  const LearnedMetric last = learn_word_metric(s.problem(), s.vocab, all);
  double norms[4] = {0, 0, 0, 0};
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t row = 0; row < 4; ++row) norms[c] += std::pow(last.metric.map[row * 4 + c], 2);
  EXPECT_GT(norms[0], 2 * (norms[1] + norms[2] + norms[3]) / 3);
  // The same seed, the same metric, whatever the threads.
  const int threads = omp_get_max_threads();
  for (const int n : {1, 2}) {
    set_threads(n);
    const LearnedMetric again = learn_word_metric(s.problem(), s.vocab, quick());
    EXPECT_EQ(again.metric.map, r.metric.map) << n << " threads";
    EXPECT_EQ(again.metric.weights, r.metric.weights) << n << " threads";
  }
  set_threads(threads);
}

// The transport's strength is relative to the costs' scale: vectors twice as long give a cost
// scale twice as large and transports of the same iterations (the same kernels, bit for bit).
// The work is counted: every training document's candidates once an epoch, and the held-out
// documents' at the stage's start (for the metric and for the identity) and after each epoch.
TEST(LearnMetric, TheTransportsStrengthFollowsTheCostsScaleAndItsWorkIsCounted) {
  LabelledSet s(200), doubled(200);
  for (double& x : doubled.vectors) x *= 2;
  LearnOptions o = quick();
  o.centroid_epochs = 0;
  o.transport_epochs = 1;
  o.map_rate = o.weight_rate = 0;  // the identity throughout
  std::vector<double> scales;
  const auto scale = [&](const LearnProgress& p) {
    if (p.epoch_done()) scales.push_back(p.cost_scale);
    return true;
  };
  const LearnedMetric once = learn_word_metric(s.problem(), s.vocab, o, scale);
  const LearnedMetric twice = learn_word_metric(doubled.problem(), doubled.vocab, o, scale);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_GT(scales[0], 0);
  EXPECT_EQ(scales[1], 2 * scales[0]);
  EXPECT_GT(once.work.sinkhorn_iterations, once.work.transports);
  EXPECT_EQ(twice.work.sinkhorn_iterations, once.work.sinkhorn_iterations);
  EXPECT_EQ(once.work.transports, (140 + 3 * 60) * o.neighbors);
  EXPECT_GT(once.work.distance_seconds, 0);
  EXPECT_GT(once.work.held_out_seconds, 0);
  // On centroids: no transports, and no cost scale.
  o.centroid_epochs = 1;
  o.transport_epochs = 0;
  scales.clear();
  const LearnedMetric centroids = learn_word_metric(s.problem(), s.vocab, o, scale);
  EXPECT_EQ(centroids.work.transports, 0u);
  ASSERT_EQ(scales.size(), 1u);
  EXPECT_TRUE(std::isnan(scales[0]));
}

// An epoch learns from a fresh sample where the training documents outnumber
// epoch_documents (its batches say how many), from all of them otherwise; at most kMostHeldOut
// documents are held out.
TEST(LearnMetric, AnEpochSamplesItsDocumentsAndTheHeldOutAreBounded) {
  const LabelledSet s(200);
  for (const std::size_t sample : {std::size_t{40}, std::size_t{0}, std::size_t{1000}}) {
    LearnOptions o = quick();
    o.epoch_documents = sample;
    o.centroid_epochs = 2;
    o.transport_epochs = 1;
    std::vector<LearnProgress> seen;
    const LearnedMetric r = learn_word_metric(s.problem(), s.vocab, o, [&](const LearnProgress& p) {
      if (p.epoch_done()) seen.push_back(p);
      return true;
    });
    ASSERT_EQ(seen.size(), 3u);
    const std::size_t per_epoch = sample == 40 ? 40 : r.train_documents;
    EXPECT_EQ(r.epoch_documents, per_epoch);
    for (const LearnProgress& p : seen) EXPECT_EQ(p.batches, (per_epoch + o.batch - 1) / o.batch);
  }
  // Many tiny documents: a fifth of them would be more than kMostHeldOut.
  const LabelledSet many(5 * kMostHeldOut + 100);
  LearnOptions o = quick();
  o.centroid_epochs = 1;
  o.transport_epochs = 0;
  o.neighbors = 2;
  o.held_out = 0.2;
  const LearnedMetric r = learn_word_metric(many.problem(), many.vocab, o);
  EXPECT_EQ(r.held_out_documents, kMostHeldOut);
  EXPECT_EQ(r.train_documents, many.docs.size() - kMostHeldOut);
}

TEST(LearnMetric, RefusesWhatItCannotLearnFromAndStopsWhenAsked) {
  LabelledSet s(20);
  std::vector<std::uint32_t> one(s.labels.size(), 3);
  NcaProblem p = s.problem();
  p.labels = one;
  EXPECT_THROW(learn_word_metric(p, s.vocab, quick()), Error);
  LearnOptions wide = quick();
  wide.out_dim = 5;
  EXPECT_THROW(learn_word_metric(s.problem(), s.vocab, wide), Error);
  // Options out of range: the library's policy, every front end's.
  for (const auto& bad : std::vector<std::function<void(LearnOptions&)>>{
           [](LearnOptions& o) { o.transport.lambda = 0; },
           [](LearnOptions& o) { o.transport.lambda = std::numeric_limits<double>::infinity(); },
           [](LearnOptions& o) { o.patience = 0; }, [](LearnOptions& o) { o.batch = 0; }}) {
    LearnOptions o = quick();
    bad(o);
    EXPECT_THROW(learn_word_metric(s.problem(), s.vocab, o), Error);
  }
  // A smaller map starts from the principal directions and learns too.
  LearnOptions narrow = quick();
  narrow.out_dim = 2;
  EXPECT_EQ(learn_word_metric(s.problem(), s.vocab, narrow).metric.map.size(), 2u * 4);
  std::size_t calls = 0;
  const LearnedMetric r = learn_word_metric(s.problem(), s.vocab, quick(),
                                            [&](const LearnProgress&) { return ++calls < 2; });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(calls, 2u);
}

}  // namespace
}  // namespace lcrwmd
