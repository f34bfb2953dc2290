// hybrid: lexical and embedding evidence together. Each query's BM25 scores and its
// query-to-document LC-RWMD distances to every document are standardised over the documents
// (z-scores), and the document's distance is weight * z(distance) - z(score): a document the
// query's words name ranks first, and among the rest those whose words lie near the query's.
// Standardising over all documents makes the two scales comparable whatever a query's length
// (a score's range grows with its terms, a distance's does not), at the cost of every
// document's distance (no pruning).
#include <cmath>
#include <vector>

#include "methods/batch_distance.h"
#include "methods/bm25.h"
#include "methods/method_impl.h"
#include "util/parallel_errors.h"

namespace lcrwmd {
namespace {

// Mean and standard deviation of n values, in double; a deviation of 0 (every value equal, as
// a query's scores where no document shares its words) weighs that side out.
template <typename T>
std::pair<double, double> moments(const T* x, std::size_t n) {
  double mean = 0, sq = 0;
  for (std::size_t i = 0; i < n; ++i) mean += static_cast<double>(x[i]);
  mean /= static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  const double sd = std::sqrt(sq / static_cast<double>(n));
  return {mean, sd > 0 ? sd : 1.0};
}

class Hybrid final : public BatchDistance {
 public:
  explicit Hybrid(const MethodContext& c)
      : n_(c.index.n_docs()),
        q_(c.queries),
        weight_(c.options.hybrid_weight),
        scorer_(c.index, c.queries.set, c.options.bm25_k1, c.options.bm25_b),
        distance_(make_lc_rwmd(c.index, c.queries, Direction::query_to_document, *c.phase1,
                               c.cache_budget, Rows::distances)) {}

  void compute(float* out) override {
    const std::size_t nq = q_.size();
    distance_->compute(out);
    if (!distance_->exact()) {  // every document's exact distance: the z-scores need them all
      ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
      for (std::size_t c = 0; c < nq * n_; ++c)
        errors.run([&] { out[c] = distance_->refine(c / n_, c % n_, out[c]); });
      errors.rethrow();
    }
    scorer_.score_each(q_.begin, nq, [&](std::size_t j, const std::vector<double>& score) {
      float* row = out + j * n_;
      const auto [sm, ss] = moments(score.data(), n_);
      const auto [dm, ds] = moments(row, n_);
      for (std::size_t i = 0; i < n_; ++i)
        row[i] = static_cast<float>(weight_ * (row[i] - dm) / ds - (score[i] - sm) / ss);
    });
  }

 private:
  std::size_t n_;
  QueryRange q_;
  double weight_;
  Bm25Scorer scorer_;
  std::unique_ptr<BatchDistance> distance_;
};

}  // namespace

const MethodImpl kHybridImpl{[](const MethodContext& c) -> std::unique_ptr<BatchDistance> {
                               return std::make_unique<Hybrid>(c);
                             },
                             nullptr, false};

}  // namespace lcrwmd
