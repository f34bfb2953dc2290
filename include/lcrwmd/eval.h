#pragma once
// How good a method's neighbours are: kNN classification error, agreement with a reference
// method's ranking (Atasu et al. 2017, figs. 5 and 6) and precision at top-k (fig. 9).
//
//   SearchResults r = search(train, test_queries, 19, options);
//   KnnReport e = knn_error(r, train, test_queries, {1, 3, 5, 7});
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

// The majority label of the first k neighbours (nearest first); a tie is settled by the first
// k - 1, and so on down to the nearest neighbour alone.
std::string_view knn_vote(std::span<const std::string_view> labels, std::size_t k);

struct KnnReport {
  std::vector<std::size_t> ks;
  std::vector<double> errors;  // per k: share of queries whose vote is not their label
  std::size_t best_k = 0;      // the smallest k with the least error
  double best_error = 0;
};

// Results must hold at least max(ks) neighbours per query where the index has that many.
// Throws where queries or documents carry no labels, or there are no queries.
KnnReport knn_error(const SearchResults& results, const Index& index, const QuerySet& queries,
                    std::span<const std::size_t> ks);

struct OverlapReport {
  std::vector<std::size_t> ks;
  std::vector<double> percents;
  std::vector<double> shares;  // ks.size() x percents.size(), row-major
};

// The number of documents in the top `percent`% of n (at least 1).
std::size_t top_percent_count(std::size_t n_docs, double percent);

// For each k and x: the share of a method's top-k that lies within the reference method's
// top x% of the documents, averaged over the queries. The reference results must hold
// top_percent_count(n_docs, max x) neighbours per query.
OverlapReport top_k_overlap(const SearchResults& method, const SearchResults& reference,
                            std::size_t n_docs, std::span<const std::size_t> ks,
                            std::span<const double> percents);

struct PrecisionGroup {
  std::size_t min_size = 0, max_size = 0;  // documents per label in the index, inclusive
  std::size_t labels = 0;
  std::vector<double> precision;  // per k: mean over the group's labels
};

struct PrecisionReport {
  std::vector<std::size_t> ks;
  std::vector<double> precision;  // per k: geometric mean over the groups
  std::vector<PrecisionGroup> groups;
};

// Precision at k (the share of a query's top k with the query's label), averaged over the
// queries of each label, then over the labels of each size group (labels with 2^g to
// 2^(g+1) - 1 documents in the index), then the geometric mean over the groups, so that a
// few large labels do not hide how the many small ones fare.
PrecisionReport precision_at_k(const SearchResults& results, const Index& index,
                               const QuerySet& queries, std::span<const std::size_t> ks);

}  // namespace lcrwmd
