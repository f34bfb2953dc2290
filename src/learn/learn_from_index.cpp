// learn_metric (lcrwmd/learn.h): an index's labelled documents as NCA's problem, and the
// learned map and weights as a Metric for the index's vocabulary.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/learn.h"
#include "learn/learn_metric.h"

namespace lcrwmd {

Metric learn_metric(const Index& train, const LearnOptions& options, const LearnCallback& progress,
                    LearnReport* report) {
  const std::string& name = train.source();
  if (train.metric() != nullptr)
    throw Error(name +
                ": built with a learned metric already; learn from an index built "
                "without one");
  // Each labelled document: its words and weights as the index holds them; labels numbered.
  std::vector<WordBag> docs;
  std::vector<std::uint32_t> labels;
  std::map<std::string_view, std::uint32_t> label_ids;
  LearnReport r;
  for (std::size_t i = 0; i < train.n_docs(); ++i) {
    const std::string_view label = train.label(i);
    if (label.empty()) {
      ++r.unlabelled;
      continue;
    }
    WordBag bag;
    const auto words = train.doc_words(i);
    bag.words.assign(words.begin(), words.end());
    const float* values = train.values().data() + train.indptr()[i];
    bag.counts.assign(values, values + words.size());
    docs.push_back(std::move(bag));
    labels.push_back(
        label_ids.emplace(label, static_cast<std::uint32_t>(label_ids.size())).first->second);
  }
  if (docs.empty())
    throw Error(name +
                ": its documents have no labels (the TSV's second column): a metric is "
                "learned from labelled documents");
  if (label_ids.size() < 2)
    throw Error(name + ": every labelled document has the label '" +
                std::string(label_ids.begin()->first) +
                "': a metric is learned from two classes or more");
  const std::size_t v = train.vocab_size(), in = train.dim();
  std::vector<double> vectors(train.vectors(), train.vectors() + v * in);
  NcaProblem problem;
  problem.vectors = vectors;
  problem.in_dim = in;
  problem.docs = docs;
  problem.labels = labels;
  const LearnedMetric learned = learn_word_metric(problem, v, options, progress);

  const WordMetric& m = learned.metric;
  std::vector<std::string> words(v);
  for (std::size_t u = 0; u < v; ++u) words[u] = train.word(u);
  // The fingerprint is over the words sorted bytewise, each with its vector as the index holds
  // it (scaled to length 1 where the index's are): what a build with the metric checks.
  std::vector<std::size_t> order(v);
  for (std::size_t u = 0; u < v; ++u) order[u] = u;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return words[a] < words[b]; });
  std::vector<std::string> sorted(v);
  for (std::size_t k = 0; k < v; ++k) sorted[k] = words[order[k]];
  const std::uint64_t vectors_fingerprint = Metric::fingerprint_vectors(
      sorted, in, [&](std::size_t k) { return train.vector(order[k]); });
  std::vector<float> map(m.map.begin(), m.map.end()), weights(m.weights.begin(), m.weights.end());
  r.train_documents = learned.train_documents;
  r.held_out_documents = learned.held_out_documents;
  r.epoch_documents = learned.epoch_documents;
  r.held_out_error = learned.held_out_error;
  r.unsupervised_error = learned.unsupervised_error;
  r.stopped = learned.stopped;
  r.work = learned.work;
  if (report) *report = r;
  return Metric(in, m.out_dim, std::move(map), std::move(words), std::move(weights),
                train.unit_vectors(), vectors_fingerprint);
}

}  // namespace lcrwmd
