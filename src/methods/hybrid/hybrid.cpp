// hybrid: lexical and embedding evidence together. Each query's BM25 scores and its
// query-to-document LC-RWMD distances are standardised (z-scores) and the document's distance is
// weight * z(distance) - z(score): a document the query's words name ranks first, and among the
// rest those whose words lie near the query's. Standardising makes the two scales comparable
// whatever a query's length (a score's range grows with its terms, a distance's does not). Both
// halves' moments are over one fixed sample of the live documents, evenly spaced (a document
// sharing no term scores 0): no search needs every document's distance or score, and on the
// retrieval tasks the sample ranks as well as every document's scores did (RESULTS.md).
//
// A top-k then reads only what can matter (Fagin's threshold algorithm over two lists,
// fused_walk.h): bm25's best documents (its block-max walk) and query-to-document's nearest
// (its threshold walk), each candidate's other half computed, both lists deeper until no other
// document can enter; where a walk would cost more than the linear pass, the query's whole row
// is computed (LC-RWMD's exact word distances, every document's score): the same values either
// way.
#include "methods/hybrid/hybrid.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "methods/batch_distance.h"
#include "methods/bm25/bm25.h"
#include "methods/hybrid/by_bound.h"
#include "methods/hybrid/fused_walk.h"
#include "methods/method_impl.h"
#include "util/parallel_errors.h"
#include "util/sorted_ids.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A deviation of 0 (every value equal, as a query's scores where no document shares its words)
// weighs that side out.
double deviation(double squares, std::size_t n) {
  const double sd = std::sqrt(squares / static_cast<double>(n));
  return sd > 0 ? sd : 1.0;
}

// The moments of the sample's values, summed in its order.
template <typename T>
std::pair<double, double> moments(std::span<const T> x) {
  if (x.empty()) return {0, 1};
  double sum = 0;
  for (const T v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double sq = 0;
  for (const T v : x) sq += (v - mean) * (v - mean);
  return {mean, deviation(sq, x.size())};
}

// A query's standardisation from its sample's scores and distances.
HybridScale make_scale(std::span<const double> scores, std::span<const float> distances,
                       double weight) {
  const auto [sm, ss] = moments(scores);
  const auto [dm, ds] = moments(distances);
  return {sm, ss, dm, ds, weight};
}

// The sample: the live documents (those of [0, n) not in `skip`, ascending) of evenly spaced
// ranks, `size` of them; all where there are no more (or size is 0).
std::vector<std::uint32_t> sample_documents(std::size_t n, std::span<const std::uint32_t> skip,
                                            std::size_t size) {
  const std::size_t live = n - skip.size();
  const std::size_t m = size == 0 ? live : std::min(size, live);
  std::vector<std::uint32_t> docs(m);
  std::size_t c = 0;  // the left-out documents at or before the current one
  for (std::size_t r = 0; r < m; ++r) {
    const std::size_t rank = r * live / m;
    while (c < skip.size() && skip[c] <= rank + c) ++c;
    docs[r] = static_cast<std::uint32_t>(rank + c);
  }
  return docs;
}

class Hybrid final : public BatchDistance {
 public:
  explicit Hybrid(const MethodContext& c)
      : n_(c.index.n_docs()),
        skip_(c.options.skip),
        q_(c.queries),
        weight_(hybrid_weight(c.options)),
        sample_(sample_documents(n_, skip_, hybrid_sample(c.options))),
        scorer_(c.index, c.queries.set, c.queries.begin, c.queries.end,
                bm25_parameters(c.options).k1, bm25_parameters(c.options).b, skip_),
        distance_(make_lc_rwmd(c.index, c.queries, Direction::query_to_document, *c.phase1,
                               c.cache_budget, walking(c) ? Rows::distances : Rows::exact,
                               walking(c))) {}

  void compute(float* out) override {
    const std::size_t nq = q_.size();
    distance_->compute(out);
    if (walks()) return;
    if (!distance_->exact()) {  // no room for the bulk way: each document's distance in turn
      ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
      for (std::size_t c = 0; c < nq * n_; ++c)
        errors.run([&] { out[c] = distance_->refine(c / n_, c % n_, out[c]); });
      errors.rethrow();
    }
    scorer_.score_each(q_.begin, nq, [&](std::size_t j, const std::vector<double>& score) {
      fuse_hybrid(out + j * n_, score.data(), n_, skip_, weight_, sample_.size());
    });
  }

  Phase1Counts phase1_counts() const override { return distance_->phase1_counts(); }

  // A top-k walks where query-to-document's distance does (its word distances fit).
  bool walks() const override { return distance_->walks(); }

  std::optional<Walked> walk(std::size_t j, std::size_t k, float ceiling,
                             std::span<const std::uint32_t> skip) const override {
    const std::size_t q = q_.begin + j;
    // The sample's distances: a query searched alone splits them among the threads (a batch's
    // queries each have a thread already).
    std::vector<float> sample(sample_.size());
    const std::size_t parts =
        omp_in_parallel() ? 1 : static_cast<std::size_t>(omp_get_max_threads());
    ParallelErrors errors;
#pragma omp parallel for schedule(static) if (parts > 1)
    for (std::size_t p = 0; p < parts; ++p) {
      const std::size_t begin = p * sample_.size() / parts, end = (p + 1) * sample_.size() / parts;
      errors.run([&] {
        distance_->refine_each(j, std::span(sample_).subspan(begin, end - begin),
                               sample.data() + begin);
      });
    }
    errors.rethrow();
    const HybridScale z = make_scale(scorer_.scores_at(q, sample_), sample, weight_);
    std::optional<Walked> w = fused_walk(
        z, k, ceiling,
        [&](std::size_t depth, float below) { return distance_->walk(j, depth, below, skip); },
        [&](std::size_t depth) { return scorer_.top_k(q, depth, kInf); },
        [&](std::span<const std::uint32_t> docs, float* d) { distance_->refine_each(j, docs, d); },
        [&](std::size_t doc) { return scorer_.score_of(q, doc); });
    if (w) w->computed += sample.size();
    return w;
  }

  // Query j's whole row, as compute() makes a batch's: where its walk would cost more.
  void row(std::size_t j, float* out) const override {
    distance_->row(j, out);
#pragma omp parallel for schedule(dynamic, 256) if (!omp_in_parallel())
    for (std::size_t i = 0; i < n_; ++i) out[i] = distance_->refine(j, i, out[i]);
    std::vector<double> score(n_);
    scorer_.score(q_.begin + j, score.data(), 0, n_);
    fuse_hybrid(out, score.data(), n_, skip_, weight_, sample_.size());
  }

 private:
  static bool walking(const MethodContext& c) {
    return c.rows == Rows::distances && c.options.prune;
  }

  std::size_t n_;
  std::span<const std::uint32_t> skip_;
  QueryRange q_;
  double weight_;
  std::vector<std::uint32_t> sample_;  // the live documents standardising both halves
  Bm25Scorer scorer_;
  std::unique_ptr<BatchDistance> distance_;
};

}  // namespace

void fuse_hybrid(float* distances, const double* scores, std::size_t n,
                 std::span<const std::uint32_t> skip, double weight, std::size_t sample) {
  const std::vector<std::uint32_t> docs = sample_documents(n, skip, sample);
  std::vector<double> s(docs.size());
  std::vector<float> d(docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    s[i] = scores[docs[i]];
    d[i] = distances[docs[i]];
  }
  const HybridScale z = make_scale(s, d, weight);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) distances[i] = z.fuse(distances[i], scores[i]);
}

double hybrid_weight(const SearchOptions& o) {
  return parameter_value(o.method, o.parameters, kHybridWeight.name);
}

std::size_t hybrid_sample(const SearchOptions& o) {
  return static_cast<std::size_t>(parameter_value(o.method, o.parameters, kHybridSample.name));
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

// ...both standardised over the sample of all the live documents, as one index of them does
// (Lucene's collection-wide statistics).
void whole_answer(Evidence& whole, std::size_t n, const SearchOptions& o) {
  const std::size_t nq = n == 0 ? 0 : whole.distances.size() / n;
  for (std::size_t j = 0; j < nq; ++j)
    fuse_hybrid(whole.distances.data() + j * n, whole.scores.data() + j * n, n, {},
                hybrid_weight(o), hybrid_sample(o));
}

// A collection's pruned top-k without every document's rows: each query's threshold walk over
// every segment at once, its positions those of bm25's scorer over the segments (theirs one
// after another, the deleted ones too): query-to-document's walk in each segment (its batch
// from the segment's searcher), the lists merged; bm25's walk over every segment's postings
// with the collection's statistics; the standardisation over the sample drawn from the live
// documents in the collection's order. The moments, the halves and their fusion
// are those whole_answer finds from the rows, so the answers are the same.
std::optional<SearchResults> segments_walk(const SegmentSet& segments, const QuerySet& queries,
                                           std::size_t k, const SearchOptions& o,
                                           const SegmentWalks& walks_of, SearchStats* stats) {
  const std::size_t nq = queries.size(), n = segments.n_docs(), parts = segments.size();
  SearchResults r = empty_results(nq, std::min(k, n));
  const double weight = hybrid_weight(o);
  const Bm25Parameters bm25 = bm25_parameters(o);
  const Bm25Scorer scorer(segments, queries, 0, nq, bm25.k1, bm25.b);
  SearchOptions distance = o;  // each segment's query-to-document LC-RWMD, walking
  distance.method = kLcRwmdMethod;
  distance.parameters = {};
  distance.direction = Direction::query_to_document;
  distance.skip = {};
  distance.ceilings = {};
  distance.progress = nullptr;
  std::vector<QuerySet> own;  // the queries over each segment's vocabulary
  for (std::size_t s = 0; s < parts; ++s) own.push_back(segments.for_segment(queries, s));
  // The sample: live documents of evenly spaced ranks in the collection's order (positions
  // ascending), and each segment's of them (its own numbers).
  std::vector<std::uint32_t> sample;
  std::vector<std::vector<std::uint32_t>> sample_in(parts);
  for (const std::uint32_t doc : sample_documents(n, {}, hybrid_sample(o))) {
    const auto [s, i] = segments.locate(doc);
    sample.push_back(static_cast<std::uint32_t>(scorer.first(s) + i));
    sample_in[s].push_back(static_cast<std::uint32_t>(i));
  }
  SearchStats st;
  for (std::size_t q = 0; q < nq; ++q) {
    std::vector<std::unique_ptr<WalkingBatch>> batch(parts);
    for (std::size_t s = 0; s < parts; ++s) {
      batch[s] = walks_of(s, own[s], q, q + 1, distance);
      if (!batch[s]) return std::nullopt;
    }
    // Documents' distances, by position (ascending): each segment's at once, its own numbers.
    const auto d2 = [&](std::span<const std::uint32_t> positions, float* out) {
      std::vector<std::uint32_t> local;
      for (std::size_t i = 0; i < positions.size();) {
        const std::size_t s = scorer.locate(positions[i]).first, at = i;
        local.clear();
        for (; i < positions.size() && scorer.locate(positions[i]).first == s; ++i)
          local.push_back(static_cast<std::uint32_t>(positions[i] - scorer.first(s)));
        batch[s]->distance->refine_each(0, local, out + at);
      }
    };
    std::vector<float> sampled(sample.size());  // segment after segment: in positions' order
    for (std::size_t s = 0, at = 0; s < parts; at += sample_in[s++].size())
      batch[s]->distance->refine_each(0, sample_in[s], sampled.data() + at);
    const HybridScale z = make_scale(scorer.scores_at(q, sample), sampled, weight);
    const float ceiling =
        std::min(o.ceilings.empty() ? kInf : o.ceilings[q], std::nextafter(o.max_distance, kInf));
    // A segment whose walk gives up (too small for one, or its words within reach of too
    // much of it) is read whole once, its live documents' bounds (phase 2's row), and refined
    // in the order of their bounds as deep as the walk asks.
    std::vector<std::optional<ByBound>> whole(parts);
    std::size_t computed = sampled.size();
    const auto nearest = [&](std::size_t depth,
                             float below) -> std::optional<BatchDistance::Walked> {
      BatchDistance::Walked all;
      for (std::size_t s = 0; s < parts; ++s) {
        const BatchDistance& b = *batch[s]->distance;
        const auto first = static_cast<std::int64_t>(scorer.first(s));
        const auto w = whole[s] ? std::nullopt : b.walk(0, depth, below, segments.deleted(s));
        if (w) {
          all.computed += w->computed;
          for (const Neighbor& x : w->top) all.top.push_back({x.distance, x.index + first});
          continue;
        }
        if (!whole[s]) {
          const std::size_t ns = segments.segment(s).n_docs();
          std::vector<float> row(ns);
          b.row(0, row.data());
          whole[s].emplace();
          // Phase 2's bounds tightened as far as cheaply can be (the kept word distances'
          // gather): its bound for a document holding no query word is the same for all.
          const std::size_t level = std::min(b.cheap_levels(), b.tighten_levels());
          for_each_kept(ns, segments.deleted(s), [&](std::size_t i) {
            const float bound = level == 0 ? row[i] : b.tighten(0, i, row[i], level - 1);
            whole[s]->bound.push_back({bound, static_cast<std::int64_t>(i)});
          });
        }
        const std::size_t before = whole[s]->exact.size();
        for (const Neighbor& x :
             whole[s]->top(depth, [&](std::size_t i) { return b.refine(0, i, 0); }))
          if (x.distance < below) all.top.push_back({x.distance, x.index + first});
        all.computed += whole[s]->exact.size() - before;
      }
      std::sort(all.top.begin(), all.top.end());
      if (all.top.size() > depth) all.top.resize(depth);
      return all;
    };
    const std::optional<BatchDistance::Walked> w = fused_walk(
        z, r.k, ceiling, nearest, [&](std::size_t depth) { return scorer.top_k(q, depth, kInf); },
        d2, [&](std::size_t position) { return scorer.score_of(q, position); });
    std::vector<Neighbor> top;
    for (const Neighbor& h : w->top) {  // nearest() never gives up
      const auto [s, i] = scorer.locate(static_cast<std::size_t>(h.index));
      top.push_back({h.distance, static_cast<std::int64_t>(segments.collection_doc(s, i))});
    }
    st.refined += computed + w->computed;
    ++st.walked;
    for (std::size_t t = 0; t < top.size(); ++t) {
      r.distances[q * r.k + t] = top[t].distance;
      r.indices[q * r.k + t] = top[t].index;
    }
    for (const std::unique_ptr<WalkingBatch>& b : batch) {
      const Phase1Counts c = b->distance->phase1_counts();
      st.word_pairs += c.word_pairs;
      st.recomputed += c.recomputed;
      if (b->phase1) st.precision = b->phase1->gemm.precision();
    }
    ++st.batches;
    st.distances += n;
    if (o.progress) o.progress(q + 1, nq);
  }
  if (stats) *stats = st;
  return r;
}

constexpr Parameter kHybridParameters[] = {kHybridWeight, kHybridSample, kBm25K1, kBm25B};
// Phase 1 and its cache as LC-RWMD's query-to-document, whose distances it fuses.
constexpr MethodImpl kHybridImpl{
    .cpu = {.make = [](const MethodContext& c) -> std::unique_ptr<BatchDistance> {
              return std::make_unique<Hybrid>(c);
            },
            .word_pass = WordPass::nearest,
            .caches_word_distances = true},
    .segments = {.walk = segments_walk, .evidence = segments_evidence, .answer = whole_answer}};
}  // namespace

extern constinit const MethodInfo kHybridMethod{
    .name = "hybrid",
    .summary =
        "bm25's score and lc-rwmd's query-to-document distance, each standardised (z-scores "
        "over hybrid_sample of the documents), summed with the distance's weight "
        "hybrid_weight: lexical and embedding evidence together",
    .symmetric = false,
    .query_to_document = true,
    .needs = Needs::whole_rows,
    .answer = Answer::score,
    .bounded = true,
    .parameters = kHybridParameters,
    .impl = &kHybridImpl};

}  // namespace lcrwmd
