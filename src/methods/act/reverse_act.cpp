// ACT-k and ICT with D2 (query -> document) on the CPU: symmetric max(D1, D2), or D2 alone,
// with D2 per pair, from the cached distances, only where the bounds before it do not rule the
// document out.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "methods/act/lc_act.h"
#include "methods/method_impl.h"

namespace lcrwmd {
namespace {

using act::kInf;
using act::LcAct;

// Symmetric: max(D1, D2). The bound is max(symmetric LC-RWMD's bound, ACT's D1), both for
// every document at once and phase 1 computed once; the pair's RWMD (D2 from the cache) is the
// cheap step before ACT's D2, which reads the same cache (or, without it, the vectors).
// Query-to-document: D2 alone, bounded by LC-RWMD's query-to-document bound (ACT-k's D2 is at
// least RWMD's), with no D1 computed.
class ReverseAct final : public BatchDistance {
 public:
  ReverseAct(const Index& index, QueryRange q, Direction direction, std::size_t steps,
             const Phase1& p1, std::size_t cache_budget)
      : index_(index),
        q_(q),
        steps_(steps),
        rwmd_(make_lc_rwmd(index, q, direction, p1, cache_budget)) {
    if (direction == Direction::symmetric)
      d1_ = std::make_unique<LcAct>(index, q, steps, p1, rwmd_->word_distances());
  }

  bool exact() const override { return false; }

  void compute(float* out) override {
    rwmd_->compute(out);
    if (d1_) d1_->raise(out);
  }

  Phase1Counts phase1_counts() const override {
    const Phase1Counts a = rwmd_->phase1_counts(), b = d1_ ? d1_->phase1_counts() : Phase1Counts{};
    return {a.word_pairs, a.recomputed + b.recomputed};
  }

  // The pair's RWMD's bounds first (LC-RWMD's steps between its bound and its value), or,
  // where it has none, its value.
  std::size_t tighten_levels() const override {
    return std::max<std::size_t>(1, rwmd_->tighten_levels());
  }
  std::size_t cheap_levels() const override { return rwmd_->cheap_levels(); }
  float tighten(std::size_t j, std::size_t doc, float lower, std::size_t level) const override {
    return rwmd_->tighten_levels() ? rwmd_->tighten(j, doc, lower, level)
                                   : rwmd_->refine(j, doc, lower);
  }

  // Symmetric: the bound holds D1 exactly (raise), so max(lower, D2) is max(D1, D2).
  float refine(std::size_t j, std::size_t doc, float lower) const override {
    return d1_ ? std::max(lower, query_to_doc(j, doc)) : query_to_doc(j, doc);
  }

 private:
  // ACT's D2: each query word's document words in certified order with exact costs (from the
  // cache's bounds where it holds them; else every cost recomputed, its interval a point), the
  // others at +inf (ACT-k stops before them) or, where all are ordered (ICT), at the last
  // ordered one's cost, so that the matrix, and so the distance, is the same whatever the
  // precision and whether the cache fitted.
  float query_to_doc(std::size_t j, std::size_t doc) const {
    const WordDistanceCache* cache = rwmd_->word_distances();
    const std::size_t q = q_.begin + j, m = index_.dim();
    const std::uint64_t db = index_.indptr()[doc], dh = index_.indptr()[doc + 1] - db;
    const std::size_t qh = q_.set.length(q);
    const std::uint32_t* words = index_.indices().data() + db;
    const float* dw = index_.values().data() + db;
    const float* qw = q_.set.weights.data() + q_.set.indptr[q];
    const std::uint32_t* qwords = q_.set.words.data() + q_.set.indptr[q];
    thread_local std::vector<const float*> rows;
    thread_local std::vector<float> cost, direct;
    thread_local std::vector<Ranked> order, scratch;
    rows.resize(dh);
    cost.resize(dh * qh);
    if (cache) {
      cache->doc_rows(j, doc, rows.data());
    } else {
      direct.resize(dh * qh);
      const cpu::Kernels& k = cpu::kernels();
      for (std::size_t a = 0; a < dh; ++a)
        for (std::size_t t = 0; t < qh; ++t)
          direct[a * qh + t] =
              k.sq_dist(index_.vector(words[a]), query_word_vector(index_, q_.set, qwords[t]), m);
    }
    const std::size_t count = reachable_words(steps_, dh);
    for (std::size_t t = 0; t < qh; ++t) {
      const auto lo = [&](std::size_t a) { return cache ? rows[a][t] : direct[a * qh + t]; };
      certified_nearest(
          dh, count, qw[t], lo,
          [&](std::size_t a) { return cache ? cache->upper(words[a], j, t, lo(a)) : lo(a); },
          [&](std::size_t a) { return dw[a]; },
          [&](std::size_t a) { return cache ? cache->exact(words[a], j, t) : lo(a); }, order,
          scratch);
      const float rest = count < dh ? kInf : std::sqrt(order.back().d);
      for (std::size_t a = 0; a < dh; ++a) cost[a * qh + t] = rest;
      for (const Ranked& r : order) cost[r.t * qh + t] = std::sqrt(r.d);
    }
    return act_from_costs(cost.data(), dh, qh, dw, qw, steps_, ActDirection::query_to_doc);
  }

  const Index& index_;
  QueryRange q_;
  std::size_t steps_;
  std::unique_ptr<BatchDistance> rwmd_;
  std::unique_ptr<LcAct> d1_;  // symmetric only
};

}  // namespace

std::unique_ptr<BatchDistance> make_act(const Index& index, QueryRange queries, Direction direction,
                                        std::size_t steps, const Phase1& phase1,
                                        std::size_t cache_budget) {
  if (direction == Direction::document_to_query) return make_lc_act(index, queries, steps, phase1);
  return std::make_unique<ReverseAct>(index, queries, direction, steps, phase1, cache_budget);
}

namespace {
constexpr Parameter kActParameters[] = {
    {.name = "act_steps",
     .kind = Parameter::Kind::integer,
     .default_value = 1,
     .min = 0,
     .max = static_cast<double>(kMaxActSteps),
     .help = "capped steps per word, k (0 is RWMD; more: tighter, costlier)",
     .hint = "use method ict for every step"}};

// ACT's and ICT's (whose steps are all of them: act_steps).
constexpr MethodImpl kActImpl{.cpu = {.make =
                                          [](const MethodContext& c) {
                                            return make_act(c.index, c.queries, c.options.direction,
                                                            act_steps(c.options), *c.phase1,
                                                            c.cache_budget);
                                          },
                                      .word_pass = WordPass::capped,
                                      .caches_word_distances = true},
                              .gpu = GpuPass::capped,
                              .explain = explain_act};
}  // namespace

extern constinit const MethodInfo kActMethod{
    .name = "act",
    .summary =
        "ACT-k (Atasu & Mittelholzer 2019): each word's transfer capped over its k = act_steps "
        "nearest words; RWMD <= ACT-k <= WMD, linear complexity",
    .document_to_query = true,
    .query_to_document = true,
    .bounded = true,
    .parameters = kActParameters,
    .impl = &kActImpl};

// ACT with every step: the same computation, k fixed (act_steps).
extern constinit const MethodInfo kIctMethod{
    .name = "ict",
    .summary = "ICT: ACT with every capped step it can take; ACT-k <= ICT <= WMD",
    .document_to_query = true,
    .query_to_document = true,
    .bounded = true,
    .impl = &kActImpl};

std::size_t act_steps(const SearchOptions& o) {
  if (o.method == Method(kIctMethod)) return kIctSteps;
  return static_cast<std::size_t>(parameter_value(o.method, o.parameters, "act_steps"));
}

}  // namespace lcrwmd
