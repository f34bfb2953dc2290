// Agreement of a method's ranking with a reference method's (Atasu et al. 2017, figs. 5, 6).
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"

namespace lcrwmd {

std::size_t top_percent_count(std::size_t n_docs, double percent) {
  const auto c = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(n_docs)));
  return std::clamp<std::size_t>(c, 1, std::max<std::size_t>(n_docs, 1));
}

OverlapReport top_k_overlap(const SearchResults& method, const SearchResults& reference,
                            std::size_t n_docs, std::span<const std::size_t> ks,
                            std::span<const double> percents) {
  if (method.n_queries != reference.n_queries)
    throw Error("overlap: the method and the reference answered different query sets");
  if (method.n_queries == 0) throw Error("evaluation: no queries (all excluded or none given)");
  OverlapReport rep;
  rep.ks.assign(ks.begin(), ks.end());
  rep.percents.assign(percents.begin(), percents.end());
  rep.shares.assign(ks.size() * percents.size(), 0.0);
  for (double x : percents)
    if (top_percent_count(n_docs, x) > reference.k)
      throw Error("overlap: the reference results are shorter than its top " + std::to_string(x) +
                  "%");
  std::unordered_set<std::int64_t> top;
  for (std::size_t q = 0; q < method.n_queries; ++q)
    for (std::size_t p = 0; p < percents.size(); ++p) {
      top.clear();
      const std::size_t count = top_percent_count(n_docs, percents[p]);
      for (std::size_t j = 0; j < count; ++j) top.insert(reference.indices[q * reference.k + j]);
      for (std::size_t c = 0; c < ks.size(); ++c) {
        const std::size_t k = std::min(ks[c], method.k);
        std::size_t inside = 0;
        for (std::size_t j = 0; j < k; ++j) inside += top.count(method.indices[q * method.k + j]);
        rep.shares[c * percents.size() + p] +=
            k ? static_cast<double>(inside) / static_cast<double>(k) : 0.0;
      }
    }
  for (double& s : rep.shares) s /= static_cast<double>(method.n_queries);
  return rep;
}

}  // namespace lcrwmd
