#pragma once
// Learning a word metric from labels (S-WMD): the map A and the word weights that lower NCA's
// loss (learn/nca_objective.h), first on centroids (cheap, and already most of the gain), then
// on entropic transport. Each document's gradient reads only its nearest candidates, found
// by centroid distance (WCD) in the current metric and found again every epoch. A part of the
// labelled documents is held out: the metric kept is the one with the lowest held-out error,
// and learning stops once that has not improved for `patience` epochs of a stage.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "learn/nca_objective.h"

namespace lcrwmd {

struct LearnOptions {
  std::size_t out_dim = 0;           // the map's rows; 0: the vectors' dimension
  std::size_t centroid_epochs = 20;  // on centroids, then
  std::size_t transport_epochs = 10;
  std::size_t batch = 64;      // documents per gradient step
  std::size_t neighbors = 40;  // candidates per document
  double held_out = 0.2;       // of the labelled documents, for choosing the metric
  std::size_t patience = 3;    // epochs without a better held-out error before a stage ends
  double map_rate = 0.005;     // Adam's step for the map and for the weights
  double weight_rate = 0.02;
  std::uint64_t seed = 0;
  EntropicOptions transport;
};

struct LearnProgress {
  const char* stage;  // "centroid" or "transport"
  std::size_t epoch;
  double loss;            // the training documents' mean loss over the epoch
  double held_out_error;  // NCA's vote over each held-out document's candidates
  double seconds;         // since learning started
};
// Returns false to stop learning (the best metric so far is returned).
using LearnCallback = std::function<bool(const LearnProgress&)>;

struct LearnedMetric {
  WordMetric metric;
  double held_out_error = 0;  // the kept metric's
  std::size_t train_documents = 0, held_out_documents = 0;
  bool stopped = false;  // by the callback
};

// problem.vectors, docs and labels (every document labelled; at least two labels, each on two
// documents or more); problem.distance and transport are set here.
LearnedMetric learn_metric(NcaProblem problem, std::size_t vocab, const LearnOptions& options,
                           const LearnCallback& progress = {});

}  // namespace lcrwmd
