// Metrics from the neighbours' labels: kNN classification error and precision at top-k.
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"

namespace lcrwmd {

std::string_view knn_vote(std::span<const std::string_view> labels, std::size_t k) {
  k = std::min(k, labels.size());
  while (k > 0) {
    std::map<std::string_view, std::size_t> counts;
    for (std::size_t j = 0; j < k; ++j) ++counts[labels[j]];
    std::size_t most = 0, tied = 0;
    std::string_view winner;
    for (const auto& [label, count] : counts) {
      if (count > most) {
        most = count;
        winner = label;
        tied = 1;
      } else if (count == most) {
        ++tied;
      }
    }
    if (tied == 1) return winner;
    --k;
  }
  return {};
}

namespace {

void require_labels(const Index& index, const QuerySet& queries) {
  if (queries.size() == 0) throw Error("evaluation: no queries (all excluded or none given)");
  for (std::size_t q = 0; q < queries.size(); ++q)
    if (queries.labels[q].empty())
      throw Error("evaluation: query '" + queries.ids[q] + "' has no label");
  for (std::size_t i = 0; i < index.n_docs(); ++i)
    if (index.label(i).empty())
      throw Error("evaluation: indexed document '" + std::string(index.doc_id(i)) +
                  "' has no label");
}

}  // namespace

KnnReport knn_error(const SearchResults& r, const Index& index, const QuerySet& queries,
                    std::span<const std::size_t> ks) {
  require_labels(index, queries);
  if (ks.empty()) throw Error("evaluation: no k given");
  KnnReport rep;
  rep.ks.assign(ks.begin(), ks.end());
  rep.errors.assign(ks.size(), 0.0);
  std::vector<std::string_view> labels;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    labels.clear();
    for (std::size_t j = 0; j < r.k && r.indices[q * r.k + j] >= 0; ++j)
      labels.push_back(index.label(static_cast<std::size_t>(r.indices[q * r.k + j])));
    for (std::size_t c = 0; c < ks.size(); ++c)
      if (knn_vote(labels, ks[c]) != queries.labels[q]) rep.errors[c] += 1;
  }
  for (double& e : rep.errors) e /= static_cast<double>(queries.size());
  std::size_t best = 0;
  for (std::size_t c = 1; c < ks.size(); ++c)
    if (rep.errors[c] < rep.errors[best] || (rep.errors[c] == rep.errors[best] && ks[c] < ks[best]))
      best = c;
  rep.best_k = ks[best];
  rep.best_error = rep.errors[best];
  return rep;
}

PrecisionReport precision_at_k(const SearchResults& r, const Index& index, const QuerySet& queries,
                               std::span<const std::size_t> ks) {
  require_labels(index, queries);
  if (ks.empty()) throw Error("evaluation: no k given");
  std::map<std::string_view, std::size_t> label_size;
  for (std::size_t i = 0; i < index.n_docs(); ++i) ++label_size[index.label(i)];
  // Per label: the sum of precision@k over its queries, and their number.
  std::map<std::string_view, std::pair<std::vector<double>, std::size_t>> per_label;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    auto& [sums, count] = per_label[queries.labels[q]];
    sums.resize(ks.size(), 0.0);
    ++count;
    for (std::size_t c = 0; c < ks.size(); ++c) {
      std::size_t hits = 0;
      for (std::size_t j = 0; j < std::min(ks[c], r.k); ++j) {
        const std::int64_t doc = r.indices[q * r.k + j];
        hits += doc >= 0 && index.label(static_cast<std::size_t>(doc)) == queries.labels[q];
      }
      sums[c] += static_cast<double>(hits) / static_cast<double>(ks[c]);
    }
  }
  std::map<int, PrecisionGroup> groups;  // by floor(log2(label size))
  for (const auto& [label, entry] : per_label) {
    const auto found = label_size.find(label);
    const std::size_t size = found == label_size.end() ? 0 : found->second;
    const int g = static_cast<int>(std::bit_width(size)) - 1;  // -1: no document has the label
    PrecisionGroup& grp = groups[g];
    grp.min_size = g < 0 ? 0 : std::size_t{1} << g;
    grp.max_size = g < 0 ? 0 : (std::size_t{2} << g) - 1;
    grp.precision.resize(ks.size(), 0.0);
    ++grp.labels;
    for (std::size_t c = 0; c < ks.size(); ++c)
      grp.precision[c] += entry.first[c] / static_cast<double>(entry.second);
  }
  PrecisionReport rep;
  rep.ks.assign(ks.begin(), ks.end());
  rep.precision.assign(ks.size(), 0.0);
  for (auto& [g, grp] : groups) {
    for (double& p : grp.precision) p /= static_cast<double>(grp.labels);
    for (std::size_t c = 0; c < ks.size(); ++c) rep.precision[c] += std::log(grp.precision[c]);
    rep.groups.push_back(grp);
  }
  for (double& p : rep.precision) p = std::exp(p / static_cast<double>(groups.size()));
  return rep;
}

}  // namespace lcrwmd
