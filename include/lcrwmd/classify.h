#pragma once
// kNN classification with a document distance: each query's label by the vote of its nearest
// labelled documents, with the votes and how many took part.
//
//   SearchResults r = searcher.search(queries, 5, {});
//   std::vector<Classification> c = classify(r, 5, [&](std::size_t d) { return index.label(d); });
//
// The vote is knn_vote's (lcrwmd/eval.h), as `eval knn` counts errors: the most frequent label
// among the k nearest; a tie is settled by the k - 1 nearest, and so on down to the nearest
// alone. Probabilities, where a front end gives them, are votes / voters (scikit-learn's
// uniform weights).
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lcrwmd/search.h"

namespace lcrwmd {

struct Classification {
  std::string label;  // the vote's winner
  // Every label among the voters with its votes: most first, then in the order the vote
  // prefers them (the winner first among equals).
  std::vector<std::pair<std::string, std::size_t>> votes;
  std::size_t voters = 0;  // min(k, the documents the results hold for the query)
};

// Document d's label, by its index in the results (an index's label(), a SegmentSet's).
using LabelOf = std::function<std::string_view(std::size_t)>;

// One classification per row of `results` (which must hold at least k neighbours per query
// where there are that many). An Error naming the document where a voter has no label.
std::vector<Classification> classify(const SearchResults& results, std::size_t k,
                                     const LabelOf& label_of,
                                     const std::function<std::string(std::size_t)>& name_of);

// The distinct labels of documents [0, n), sorted: the classes probabilities are given for.
std::vector<std::string> label_classes(std::size_t n, const LabelOf& label_of);

}  // namespace lcrwmd
