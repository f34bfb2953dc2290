#pragma once
// Learning a word metric from an index's labels (Supervised WMD, Huang et al., NeurIPS 2016):
// a map of the word vectors and a weight per word that make each document's nearest
// documents of its own class, measured by entropic transport in the engine's Euclidean cost
// and started on centroids (WCD). The result is a Metric (lcrwmd/metric.h) that a build
// applies (BuildOptions::metric), so that every method runs in the learned space.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "lcrwmd/metric.h"

namespace lcrwmd {

class Index;

// Entropy-regularised transport (the relaxed problem whose plan gives the gradient).
struct EntropicOptions {
  double lambda = 10.0;     // the strength on costs as given: larger, nearer the exact transport
  double tolerance = 1e-9;  // stop once the rows' marginals are within it (L1)
  std::size_t max_iterations = 1000;
};

// The held-out documents that choose the metric, at most: their vote after every epoch costs
// a share of an epoch, and a few thousand tell metrics apart as well as more would.
inline constexpr std::size_t kMostHeldOut = 2048;

struct LearnOptions {
  std::size_t out_dim = 0;           // the map's rows; 0: the vectors' dimension
  std::size_t centroid_epochs = 20;  // on centroids, then
  std::size_t transport_epochs = 10;
  std::size_t batch = 64;      // documents per gradient step
  std::size_t neighbors = 40;  // candidates per document
  double held_out = 0.2;       // of the labelled documents (at most kMostHeldOut), for
                               // choosing the metric
  // Documents an epoch learns from: a fresh random sample of the training documents each
  // epoch where there are more (0: every one). Supervised WMD trains a fixed number of batches
  // whatever the corpus; this bounds an epoch's work alike on large corpora.
  std::size_t epoch_documents = 4096;
  std::size_t patience = 3;  // epochs without a better held-out error before a stage ends
  double map_rate = 0.005;   // Adam's step for the map and for the weights
  double weight_rate = 0.02;
  std::uint64_t seed = 0;
  // The transport's strength is relative to the costs' scale: each transport epoch solves with
  // lambda / s, s the median over the training documents of the largest word-to-word cost to
  // their nearest candidate in the epoch's metric (S-WMD scales its map so that s is 1). Costs
  // grow as NCA sharpens its softmax; a fixed strength would need ever more Sinkhorn iterations.
  // The tolerance is looser than a distance needs: the gradient is measured against the
  // held-out error.
  EntropicOptions transport{.lambda = 10.0, .tolerance = 1e-6, .max_iterations = 1000};
};

// Where learning's time went, and how much transport it solved.
struct LearnWork {
  double candidates_seconds = 0;  // each document's nearest by centroid, the cost scale
  double distance_seconds = 0;    // training's distances: words mapped, costs, transports
  double gradient_seconds = 0;    // training's gradients and Adam's steps
  double held_out_seconds = 0;    // the held-out vote after each epoch
  std::size_t transports = 0;     // solved, training's and the held-out vote's
  std::size_t sinkhorn_iterations = 0;
  // The work between two totals (an epoch's own, from the running totals that progress reports).
  LearnWork operator-(const LearnWork& then) const {
    return {.candidates_seconds = candidates_seconds - then.candidates_seconds,
            .distance_seconds = distance_seconds - then.distance_seconds,
            .gradient_seconds = gradient_seconds - then.gradient_seconds,
            .held_out_seconds = held_out_seconds - then.held_out_seconds,
            .transports = transports - then.transports,
            .sinkhorn_iterations = sinkhorn_iterations - then.sinkhorn_iterations};
  }
};

// Reported after every batch, so that a stop is prompt; an epoch has ended where batch ==
// batches, and only then is its held-out error known.
struct LearnProgress {
  const char* stage;  // "centroid" or "transport"
  std::size_t epoch;
  std::size_t batch, batches;
  double loss;            // the training documents' mean loss over the epoch so far
  double held_out_error;  // NCA's vote over each held-out document's candidates; NaN mid-epoch
  double seconds;         // since learning started
  double cost_scale;      // the transport epoch's (see LearnOptions::transport); NaN on centroids
  LearnWork work;         // since learning started
  bool epoch_done() const { return batch == batches; }
};
// Returns false to stop learning (the best metric so far is returned).
using LearnCallback = std::function<bool(const LearnProgress&)>;

struct LearnReport {
  std::size_t train_documents = 0, held_out_documents = 0;
  std::size_t epoch_documents = 0;  // each epoch's sample (train_documents where all are taken)
  std::size_t unlabelled = 0;       // documents without a label: left out
  // NCA's vote over each held-out document's nearest by centroid, by the last stage's distance:
  double held_out_error = 0;      // the kept metric's
  double unsupervised_error = 0;  // the identity map's with unit weights (kept where it was
                                  // better and the map keeps the vectors' dimension)
  bool stopped = false;           // by the callback
  LearnWork work;
};

// A metric learned from `train`'s labelled documents (their word vectors and weights as the
// index holds them), for every word of its vocabulary. An Error naming the index where it has
// no labels, a single class, or was itself built with a metric.
Metric learn_metric(const Index& train, const LearnOptions& options,
                    const LearnCallback& progress = {}, LearnReport* report = nullptr);

}  // namespace lcrwmd
