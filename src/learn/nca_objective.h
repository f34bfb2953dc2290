#pragma once
// Supervised WMD's objective (Huang et al., NeurIPS 2016) and its exact gradient: how likely
// each document's own class is under a softmax over its distances to candidate neighbours
// (NCA's leave-one-out loss), the distance being entropic transport between the documents'
// words in a learned metric: word vectors mapped by A (out x in), each word's count multiplied
// by its learned weight and the document renormalised, the cost between two words the
// Euclidean distance of their mapped vectors (the engine's cost; the paper squares it).
//
// For document a and candidates b of label y:
//   p_ab = exp(-D_ab) / sum_c exp(-D_ac),  loss_a = -log sum_{b: y_b = y_a} p_ab
//   d loss_a / d D_ab = p_ab ([y_b = y_a] / P_a - 1),  P_a = sum_{b: y_b = y_a} p_ab
// and each D_ab's gradient is its transport's plan (through the costs, to A) and potentials
// (through the renormalised counts, to the weights): learn/entropic_transport.h. The centroid
// distance ||A (c_a - c_b)|| (c: a document's weighted mean vector) is the same objective on
// WCD, the paper's start.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "learn/entropic_transport.h"

namespace lcrwmd {

// A document: its distinct words (vocabulary ids) and their counts.
struct WordBag {
  std::vector<std::uint32_t> words;
  std::vector<double> counts;
};

// What is learned: the map A and a weight per vocabulary word (positive).
struct WordMetric {
  std::size_t out_dim = 0, in_dim = 0;
  std::vector<double> map;      // out_dim x in_dim, row-major
  std::vector<double> weights;  // per vocabulary word
  // The identity map and unit weights: the unsupervised metric.
  static WordMetric identity(std::size_t dim, std::size_t vocab);
};

// The distance between two documents in the metric.
enum class NcaDistance {
  transport,  // entropic transport between their words (S-WMD)
  centroid,   // between their weighted mean vectors, mapped (WCD: the cheap start)
};

struct NcaProblem {
  std::span<const double> vectors;  // vocab x in_dim, row-major
  std::size_t in_dim = 0;
  std::span<const WordBag> docs;
  std::span<const std::uint32_t> labels;  // per document
  NcaDistance distance = NcaDistance::transport;
  EntropicOptions transport;
};

// What a call's distances took: the transports solved and their Sinkhorn iterations, and the
// wall time of the distances (mapping, costs, transports) and of the gradient (what is left);
// where threads share a batch's documents, their wall time is split as the threads' was.
struct NcaWork {
  std::size_t transports = 0, iterations = 0;
  double distance_seconds = 0, gradient_seconds = 0;
};

struct NcaValue {
  double loss = 0;                   // mean over the documents counted
  std::size_t documents = 0;         // those with a candidate of their class (the others: no
                                     // term, their loss constant in the metric)
  std::vector<double> grad_map;      // d loss / d A, as map
  std::vector<double> grad_weights;  // d loss / d weights, per vocabulary word
  NcaWork work;
};

// Each document of `batch`'s distance to each of its candidates in the metric.
std::vector<std::vector<double>> nca_distances(
    const NcaProblem& problem, const WordMetric& metric, std::span<const std::uint32_t> batch,
    std::span<const std::vector<std::uint32_t>> candidates, NcaWork* work = nullptr);

// Each document's weighted mean vector mapped, A c (documents x out_dim, row-major): the
// centroid distance's terms, by which candidates are found.
std::vector<double> mapped_centroids(const NcaProblem& problem, const WordMetric& metric);

// The largest cost between a word of docs[k] and a word of partners[k], in the metric: the
// scale of the costs that the transport's strength is relative to.
std::vector<double> largest_costs(const NcaProblem& problem, const WordMetric& metric,
                                  std::span<const std::uint32_t> docs,
                                  std::span<const std::uint32_t> partners);

// The loss of documents `batch` (ids into problem.docs), each against its own candidates
// (candidates[k]: documents other than batch[k]), and with `gradient` its gradient.
NcaValue nca_objective(const NcaProblem& problem, const WordMetric& metric,
                       std::span<const std::uint32_t> batch,
                       std::span<const std::vector<std::uint32_t>> candidates, bool gradient);

}  // namespace lcrwmd
