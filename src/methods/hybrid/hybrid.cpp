// hybrid: lexical and embedding evidence together. Each query's BM25 scores and its
// query-to-document LC-RWMD distances to every document are standardised over the documents
// (z-scores), and the document's distance is weight * z(distance) - z(score): a document the
// query's words name ranks first, and among the rest those whose words lie near the query's.
// Standardising over all documents makes the two scales comparable whatever a query's length
// (a score's range grows with its terms, a distance's does not), at the cost of every
// document's distance (no pruning): LC-RWMD's linear pass over the exact word distances
// (Rows::exact).
#include "methods/hybrid/hybrid.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "methods/batch_distance.h"
#include "methods/bm25/bm25.h"
#include "methods/method_impl.h"
#include "util/parallel_errors.h"
#include "util/sorted_ids.h"

namespace lcrwmd {
namespace {

// Mean and standard deviation of n values, in double, summed a fixed block at a time and the
// blocks in order: the same bits whatever the threads (one query's row is split among them; a
// batch's rows run a thread each). A deviation of 0 (every value equal, as a query's scores
// where no document shares its words) weighs that side out.
template <typename T>
std::pair<double, double> moments(const T* x, std::size_t n) {
  constexpr std::size_t kBlock = std::size_t{1} << 14;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> part(blocks);
  const auto sum = [&](auto&& term) {
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < blocks; ++b) {
      double s = 0;
      for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) s += term(i);
      part[b] = s;
    }
    double total = 0;
    for (const double s : part) total += s;
    return total;
  };
  const double mean =
      sum([&](std::size_t i) { return static_cast<double>(x[i]); }) / static_cast<double>(n);
  const double sq = sum([&](std::size_t i) {
    const double d = static_cast<double>(x[i]) - mean;
    return d * d;
  });
  const double sd = std::sqrt(sq / static_cast<double>(n));
  return {mean, sd > 0 ? sd : 1.0};
}

// The moments of the values not left out, summed as for a row of only them (the same bits).
template <typename T>
std::pair<double, double> live_moments(const T* x, std::size_t n,
                                       std::span<const std::uint32_t> skip) {
  if (skip.empty()) return moments(x, n);
  std::vector<T> live;
  live.reserve(n - skip.size());
  for_each_kept(n, skip, [&](std::size_t i) { live.push_back(x[i]); });
  return moments(live.data(), live.size());
}

class Hybrid final : public BatchDistance {
 public:
  explicit Hybrid(const MethodContext& c)
      : n_(c.index.n_docs()),
        skip_(c.options.skip),
        q_(c.queries),
        weight_(hybrid_weight(c.options)),
        scorer_(c.index, c.queries.set, c.queries.begin, c.queries.end,
                bm25_parameters(c.options).k1, bm25_parameters(c.options).b),
        distance_(make_lc_rwmd(c.index, c.queries, Direction::query_to_document, *c.phase1,
                               c.cache_budget, Rows::exact)) {}

  void compute(float* out) override {
    const std::size_t nq = q_.size();
    distance_->compute(out);
    if (!distance_->exact()) {  // no room for the bulk way: each document's distance in turn
      ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
      for (std::size_t c = 0; c < nq * n_; ++c)
        errors.run([&] { out[c] = distance_->refine(c / n_, c % n_, out[c]); });
      errors.rethrow();
    }
    scorer_.score_each(q_.begin, nq, [&](std::size_t j, const std::vector<double>& score) {
      fuse_hybrid(out + j * n_, score.data(), n_, skip_, weight_);
    });
  }

  Phase1Counts phase1_counts() const override { return distance_->phase1_counts(); }

 private:
  std::size_t n_;
  std::span<const std::uint32_t> skip_;
  QueryRange q_;
  double weight_;
  Bm25Scorer scorer_;
  std::unique_ptr<BatchDistance> distance_;
};

}  // namespace

void fuse_hybrid(float* distances, const double* scores, std::size_t n,
                 std::span<const std::uint32_t> skip, double weight) {
  // Plain variables, not structured bindings: clang's OpenMP regions cannot capture those.
  const std::pair<double, double> s = live_moments(scores, n, skip),
                                  d = live_moments(distances, n, skip);
  const double sm = s.first, ss = s.second, dm = d.first, ds = d.second;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i)
    distances[i] = static_cast<float>(weight * (distances[i] - dm) / ds - (scores[i] - sm) / ss);
}

double hybrid_weight(const SearchOptions& o) {
  return parameter_value(o.method, o.parameters, kHybridWeight.name);
}

namespace {

// A collection's segments: LC-RWMD's query-to-document distances from each segment's searcher
// and bm25's scores over every segment's postings (the queries weighted by the collection's
// statistics), the live documents' in the collection's order...
Evidence segments_evidence(const SegmentSet& segments, const SegmentRows& rows_of,
                           const QuerySet& part, const SearchOptions& o) {
  const std::size_t n = segments.n_docs();
  Evidence e;
  e.distances.resize(part.size() * n);
  e.scores.resize(part.size() * n);
  SearchOptions distance = o;
  distance.method = kLcRwmdMethod;
  distance.parameters = {};
  distance.direction = Direction::query_to_document;
  rows_of(distance, e.distances.data());
  const Bm25Parameters bm25 = bm25_parameters(o);
  const Bm25Scorer scorer(segments, part, 0, part.size(), bm25.k1, bm25.b);
  scorer.score_each(0, part.size(), [&](std::size_t j, const std::vector<double>& score) {
    double* live = e.scores.data() + j * n;
    for (std::size_t s = 0; s < segments.size(); ++s)
      for_each_kept(segments.segment(s).n_docs(), segments.deleted(s),
                    [&](std::size_t i) { *live++ = score[scorer.first(s) + i]; });
  });
  return e;
}

// ...both standardised over all the live documents, as one index of them does (Lucene's
// collection-wide statistics).
void whole_answer(Evidence& whole, std::size_t n, const SearchOptions& o) {
  const std::size_t nq = n == 0 ? 0 : whole.distances.size() / n;
  for (std::size_t j = 0; j < nq; ++j)
    fuse_hybrid(whole.distances.data() + j * n, whole.scores.data() + j * n, n, {},
                hybrid_weight(o));
}

constexpr Parameter kHybridParameters[] = {kHybridWeight, kBm25K1, kBm25B};
// Phase 1 and its cache as LC-RWMD's query-to-document, which it computes for every document.
constexpr MethodImpl kHybridImpl{
    .cpu = {.make = [](const MethodContext& c) -> std::unique_ptr<BatchDistance> {
              return std::make_unique<Hybrid>(c);
            },
            .word_pass = WordPass::nearest,
            .caches_word_distances = true},
    .segments = {.evidence = segments_evidence, .answer = whole_answer}};
}  // namespace

extern constinit const MethodInfo kHybridMethod{
    .name = "hybrid",
    .summary =
        "bm25's score and lc-rwmd's query-to-document distance, each standardised over the "
        "documents (z-scores), summed with the distance's weight hybrid_weight: lexical and "
        "embedding evidence together",
    .symmetric = false,
    .query_to_document = true,
    .needs = Needs::whole_rows,
    .answer = Answer::score,
    .parameters = kHybridParameters,
    .impl = &kHybridImpl};

}  // namespace lcrwmd
