// kNN classification (lcrwmd/classify.h).
#include "lcrwmd/classify.h"

#include <algorithm>
#include <set>

#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"

namespace lcrwmd {

std::vector<Classification> classify(const SearchResults& r, std::size_t k, const LabelOf& label_of,
                                     const std::function<std::string(std::size_t)>& name_of) {
  if (k == 0) throw Error("classify: k must be at least 1");
  std::vector<Classification> out(r.n_queries);
  std::vector<std::string_view> labels;
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    labels.clear();
    for (std::size_t j = 0; j < std::min(k, r.k) && r.indices[q * r.k + j] >= 0; ++j) {
      const auto doc = static_cast<std::size_t>(r.indices[q * r.k + j]);
      labels.push_back(label_of(doc));
      if (labels.back().empty())
        throw Error("classify: document '" + name_of(doc) +
                    "' has no label: build the index from labelled documents (id, label, text)");
    }
    Classification& c = out[q];
    c.voters = labels.size();
    c.label = std::string(knn_vote(labels, labels.size()));
    // Counts in order of first appearance (nearest first), then by count...
    for (const std::string_view l : labels) {
      const auto it =
          std::find_if(c.votes.begin(), c.votes.end(), [&](const auto& v) { return v.first == l; });
      if (it == c.votes.end())
        c.votes.emplace_back(std::string(l), 1);
      else
        ++it->second;
    }
    std::stable_sort(c.votes.begin(), c.votes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    // ...and the winner, always among the most voted, first among those tied with it (the
    // rule settled their tie with fewer voters).
    const auto winner = std::find_if(c.votes.begin(), c.votes.end(),
                                     [&](const auto& v) { return v.first == c.label; });
    if (winner != c.votes.end()) std::rotate(c.votes.begin(), winner, winner + 1);
  }
  return out;
}

std::vector<std::string> label_classes(std::size_t n, const LabelOf& label_of) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < n; ++i) seen.insert(label_of(i));
  return {seen.begin(), seen.end()};
}

}  // namespace lcrwmd
