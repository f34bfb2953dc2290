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

#include "lcrwmd/learn.h"
#include "learn/nca_objective.h"

namespace lcrwmd {

struct LearnedMetric {
  WordMetric metric;
  double held_out_error = 0;      // the kept metric's
  double unsupervised_error = 0;  // the identity's with unit weights
  std::size_t train_documents = 0, held_out_documents = 0;
  std::size_t epoch_documents = 0;  // each epoch's sample (train_documents where all are taken)
  bool stopped = false;             // by the callback
  LearnWork work;
};

// problem.vectors, docs and labels (every document labelled; at least two labels, each on two
// documents or more); problem.distance and transport are set here.
LearnedMetric learn_word_metric(NcaProblem problem, std::size_t vocab, const LearnOptions& options,
                                const LearnCallback& progress = {});

}  // namespace lcrwmd
