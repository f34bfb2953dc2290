// The CPU backend's search driver: plans query batches to the memory budget, asks the method
// for a block of distances, and collects top-k (pruning the refinement of bounded methods) or
// streams the full matrix.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "core/numerics.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/topk.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"
#include "search/batch_plan.h"
#include "util/large_array.h"
#include "util/parallel_errors.h"

namespace lcrwmd {

void set_threads(int n) {
  if (n <= 0) return;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

namespace {

constexpr float kLeftOut = std::numeric_limits<float>::infinity();

// f(doc, bound) for every listed document (refine, or tighten at level 0), with its bound, in
// parallel unless already inside a parallel region.
template <typename F>
void for_all(const std::vector<std::int64_t>& docs, const std::vector<float>& bounds,
             std::vector<float>& out, F&& f) {
  out.resize(docs.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 4) if (!omp_in_parallel())
  for (std::size_t c = 0; c < docs.size(); ++c)
    errors.run([&] { out[c] = f(static_cast<std::size_t>(docs[c]), bounds[c]); });
  errors.rethrow();
}

// Top-k of a bounded method: D >= lower, so refine documents in ascending (lower, index) order
// and stop at the first whose bound already loses against the current k-th best. A method with
// one cheaper bound between (symmetric LC-RWMD: D2 from its cache's lower bounds) has each
// chunk tightened first, and only the documents whose tighter bound still beats the k-th best
// are refined. An estimate (SearchOptions::estimate) ends once it has its exact distances.
std::vector<Neighbor> pruned_topk(const BatchDistance& dist, std::size_t j, const float* lower,
                                  std::size_t n, std::size_t k, float ceiling, std::size_t estimate,
                                  SearchStats& counts) {
  TopK best(k);
  if (k == 0) return best.take_sorted();
  const auto admits = [&](const Neighbor& b) { return b.distance < ceiling && best.accepts(b); };
  const bool tighten = dist.tighten_levels() == 1;
  std::vector<std::int64_t> docs, kept;
  std::vector<float> bounds, tight, kept_bounds, exact;
  // Documents refined together: in parallel, enough for every thread; inside a parallel
  // region (a batch's queries), one at a time, each result tightening the k-th best before
  // the next document is let in (a third of the refinements on 20news, symmetric).
  const std::size_t chunk =
      omp_in_parallel() ? 1 : 32 * static_cast<std::size_t>(omp_get_max_threads());
  const auto refine = [&](std::size_t doc, float bound) { return dist.refine(j, doc, bound); };
  // Refines `sorted` chunk by chunk; false once the rest cannot enter the top-k.
  auto consume = [&](const std::vector<Neighbor>& sorted) {
    for (std::size_t c0 = 0; c0 < sorted.size(); c0 += chunk) {
      docs.clear();
      bounds.clear();
      for (std::size_t c = c0; c < std::min(sorted.size(), c0 + chunk); ++c) {
        if (!admits(sorted[c])) break;
        docs.push_back(sorted[c].index);
        bounds.push_back(sorted[c].distance);
      }
      if (tighten) {
        for_all(docs, bounds, tight,
                [&](std::size_t doc, float bound) { return dist.tighten(j, doc, bound, 0); });
        counts.tightened += docs.size();
        kept.clear();
        kept_bounds.clear();
        for (std::size_t c = 0; c < docs.size(); ++c)
          if (admits({tight[c], docs[c]})) kept.push_back(docs[c]), kept_bounds.push_back(tight[c]);
        for_all(kept, kept_bounds, exact, refine);
        counts.refined += kept.size();
        for (std::size_t c = 0; c < kept.size(); ++c) best.push({exact[c], kept[c]});
      } else {
        for_all(docs, bounds, exact, refine);
        counts.refined += docs.size();
        for (std::size_t c = 0; c < docs.size(); ++c) best.push({exact[c], docs[c]});
      }
      if (docs.size() < std::min(chunk, sorted.size() - c0)) return false;
      if (estimate && best.size() >= estimate) return false;
    }
    return true;
  };
  // The few best bounds first: they usually settle a good k-th best.
  const std::vector<Neighbor> first = select_topk({lower, n}, numerics::first_refined(k, n));
  if (!consume(first) || first.size() == n) return best.take_sorted();
  // Then, in order, every other document whose bound still beats the k-th best.
  const Neighbor last = first.back();
  std::vector<Neighbor> rest;
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbor b{lower[i], static_cast<std::int64_t>(i)};
    if (last < b && admits(b)) rest.push_back(b);
  }
  std::sort(rest.begin(), rest.end());
  consume(rest);
  return best.take_sorted();
}

// The exact distances of one query's row, from their bounds.
void refine_row(const BatchDistance& dist, std::size_t j, float* row, std::size_t n) {
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 16) if (!omp_in_parallel())
  for (std::size_t i = 0; i < n; ++i) errors.run([&] { row[i] = dist.refine(j, i, row[i]); });
  errors.rethrow();
}

// Top-k of a method with a chain of bounds below a costly exact distance (WMD: LC-RWMD's bound,
// lifted for the whole row by raise_bounds, <= quick dual <= close dual <= WMD; symmetric
// LC-RWMD: max(D1, B2) <= D2's neighbourhood bound <= the gather's <= the distance).
// Candidates leave a min-heap in ascending bound order and come back one level tighter, or, at
// the last level, with their exact distance. The first bound that cannot enter the top-k ends
// the search: each step is taken only while the bound before it still beats the k-th best. As
// in pruned_topk, the few best bounds go first and settle a k-th best (in the order one heap
// of every document would take them while theirs are the least bounds left, then until k
// distances are known); only the documents whose bound still beats it join the heap after (a
// heap of a million documents costs more than a Set-1 query's steps). An estimate ends once
// it has its exact distances.
struct Candidate {
  float bound;
  std::int64_t doc;
  std::size_t level;  // tighten() steps taken
};

std::vector<Neighbor> cascade_topk(const BatchDistance& dist, std::size_t j, float* lower,
                                   std::size_t n, std::size_t k, float ceiling,
                                   std::size_t estimate, SearchStats& counts) {
  TopK best(k);
  if (k == 0) return best.take_sorted();
  const auto admits = [&](const Neighbor& b) { return b.distance < ceiling && best.accepts(b); };
  const std::size_t levels = dist.tighten_levels(), cheap = dist.cheap_levels();
  dist.raise_bounds(j, lower);
  const auto later = [](const Candidate& a, const Candidate& b) {
    return Neighbor{b.bound, b.doc} < Neighbor{a.bound, a.doc};
  };
  // Costly steps per round: one per thread, so that each round's results tighten the k-th
  // best before the next; cheap steps ride along, many more.
  const std::size_t threads =
      omp_in_parallel() ? 1 : static_cast<std::size_t>(omp_get_max_threads());
  std::vector<Candidate> heap, round;
  std::vector<float> value;
  // Runs the heap's candidates until the next cannot enter the top-k, comes after `until`,
  // or, with `fill`, k distances are known; false once an estimate has its distances.
  const auto run = [&](const Neighbor* until, bool fill) {
    std::make_heap(heap.begin(), heap.end(), later);
    for (;;) {
      round.clear();
      std::size_t costly = 0;
      while (!heap.empty() && costly < threads && round.size() < 32 * threads) {
        const Candidate top = heap.front();
        if (!admits({top.bound, top.doc}) || (until && *until < Neighbor{top.bound, top.doc}) ||
            (fill && best.size() >= k))
          break;
        std::pop_heap(heap.begin(), heap.end(), later);
        heap.pop_back();
        costly += top.level >= cheap;
        round.push_back(top);
      }
      if (round.empty()) return true;
      value.resize(round.size());
      ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1) if (round.size() > 1 && threads > 1)
      for (std::size_t c = 0; c < round.size(); ++c)
        errors.run([&] {
          const Candidate& r = round[c];
          const auto doc = static_cast<std::size_t>(r.doc);
          value[c] = r.level == levels ? dist.refine(j, doc, r.bound)
                                       : dist.tighten(j, doc, r.bound, r.level);
        });
      errors.rethrow();
      for (std::size_t c = 0; c < round.size(); ++c) {
        const Neighbor found{value[c], round[c].doc};
        if (round[c].level == levels) {
          ++counts.refined;
          best.push(found);
        } else {
          ++counts.tightened;
          if (admits(found)) {
            heap.push_back({found.distance, found.index, round[c].level + 1});
            std::push_heap(heap.begin(), heap.end(), later);
          }
        }
      }
      if (estimate && best.size() >= estimate) return false;
    }
  };
  const std::vector<Neighbor> first = select_topk({lower, n}, numerics::first_refined(k, n));
  for (const Neighbor& b : first) heap.push_back({b.distance, b.index, 0});
  if (first.size() == n) {
    run(nullptr, false);
    return best.take_sorted();
  }
  // Every other document's bound comes after the last of the first.
  const Neighbor last = first.back();
  if (!run(&last, false) || !run(nullptr, true)) return best.take_sorted();
  std::erase_if(heap, [&](const Candidate& c) { return !admits({c.bound, c.doc}); });
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbor b{lower[i], static_cast<std::int64_t>(i)};
    if (last < b && admits(b)) heap.push_back({b.distance, b.index, 0});
  }
  run(nullptr, false);
  return best.take_sorted();
}

// Plans the batches and has the method compute each one's block of distances (or bounds);
// use(first_query, batch_size, method, block) then takes what its caller needs from it.
template <typename Use>
void for_each_batch(const Index& index, const QuerySet& queries, const SearchOptions& opt,
                    const CpuOptions& cpu, const Phase1* p1, Rows rows, SearchStats& st,
                    Use&& use) {
  const std::size_t n = index.n_docs();
  LargeArray<float> block;
  for (const BatchPlan& plan : plan_batches(index, queries, opt, cpu, rows)) {
    const QueryRange range{queries, plan.begin, plan.end};
    const auto dist =
        implementation(opt.method).cpu.make({index, range, opt, p1, plan.cache_budget, rows});
    if (!dist->walks()) block.resize(range.size() * n);  // a walk writes no rows
    dist->compute(block.data());
    ++st.batches;
    st.distances += range.size() * n;
    if (p1) st.precision = p1->gemm.precision();
    use(plan.begin, range.size(), *dist, block.data());
    const Phase1Counts counts = dist->phase1_counts();  // refinements recompute some too
    st.word_pairs += counts.word_pairs;
    st.recomputed += counts.recomputed;
    if (opt.progress) opt.progress(plan.end, queries.size());
  }
}

}  // namespace

CpuSearcher::CpuSearcher(const Index& index, const CpuOptions& options)
    : index_(index), options_(options) {
  options_.precision = resolve_precision(options.precision);
  // The SIMD level is chosen here, not by the first kernel called, which may run inside an
  // OpenMP region: a bad LCRWMD_SIMD must be an Error, and none can leave such a region.
  (void)cpu::kernels();
}

CpuSearcher::~CpuSearcher() = default;

const cpu::WordGemm& CpuSearcher::word_gemm() const {
  std::lock_guard lock(gemm_mutex_);
  if (!gemm_) gemm_ = std::make_shared<const cpu::WordGemm>(index_, options_.precision);
  return *gemm_;
}

std::optional<Phase1> CpuSearcher::phase1(const SearchOptions& opt) const {
  if (implementation(opt.method).cpu.word_pass == WordPass::none) return std::nullopt;
  return Phase1{word_gemm(), options_.tile_rows, options_.tile_words};
}

SearchResults CpuSearcher::top_k(const QuerySet& queries, std::size_t k, const SearchOptions& opt,
                                 SearchStats* stats) const {
  check_query_words(index_, queries);
  if (const auto own = implementation(opt.method).cpu.top_k)
    return own(index_, queries, k, opt, stats);
  const Index& index = index_;
  const std::size_t n = index.n_docs();
  SearchResults res = empty_results(queries.size(), std::min(k, n));
  SearchStats st;
  const std::optional<Phase1> p1 = phase1(opt);
  for_each_batch(
      index, queries, opt, options_, p1 ? &*p1 : nullptr, top_k_rows(opt), st,
      [&](std::size_t first, std::size_t size, const BatchDistance& dist, float* block) {
        std::atomic<std::size_t> refined{0}, tightened{0}, walked{0};
        const auto row_top_k = [&](std::size_t j) {
          const std::size_t q = first + j;
          // Documents beyond the range cannot be in the answer: their bounds
          // prune as an earlier shard's k-th best does (inclusive of the range).
          const float ceiling = std::min(
              opt.ceilings.empty() ? std::numeric_limits<float>::infinity() : opt.ceilings[q],
              std::nextafter(opt.max_distance, std::numeric_limits<float>::infinity()));
          const auto write = [&](const std::vector<Neighbor>& top) {
            for (std::size_t t = 0; t < top.size(); ++t) {
              res.distances[q * res.k + t] = top[t].distance;
              res.indices[q * res.k + t] = top[t].index;
            }
          };
          LargeArray<float> own_row;  // a walking batch's rows are made where a walk gives up
          float* row = block + j * n;
          if (dist.walks()) {
            if (const auto w = dist.walk(j, res.k, ceiling, opt.skip)) {
              refined += w->computed;
              ++walked;
              return write(w->top);
            }
            own_row.resize(n);
            row = own_row.data();
            dist.row(j, row);
          }
          // Left-out documents: bounds and distances no document can lose to.
          const auto leave_out = [&] {
            for (const std::uint32_t d : opt.skip) row[d] = kLeftOut;
          };
          leave_out();
          std::vector<Neighbor> top;
          SearchStats counts;
          if (!dist.exact() && opt.prune && dist.tighten_levels() > 1) {
            top = cascade_topk(dist, j, row, n, res.k, ceiling, opt.estimate, counts);
          } else if (!dist.exact() && opt.prune) {
            top = pruned_topk(dist, j, row, n, res.k, ceiling, opt.estimate, counts);
          } else {
            if (!dist.exact()) {
              refine_row(dist, j, row, n);
              counts.refined = n;
              leave_out();
            }
            top = select_topk({row, n}, res.k);
            // Fewer documents left than k: the left-out ones are not neighbours.
            while (!top.empty() && !opt.skip.empty() && top.back().distance == kLeftOut &&
                   std::binary_search(opt.skip.begin(), opt.skip.end(),
                                      static_cast<std::uint32_t>(top.back().index)))
              top.pop_back();
          }
          refined += counts.refined;
          tightened += counts.tightened;
          write(top);
        };
        // One query: no parallel region around it, so that its own steps (refinements,
        // selection) run on every thread, in the process's thread pool. (A region of one
        // thread around them would have each of their regions start and end threads of its
        // own, which costs more than a small segment's whole search.)
        ParallelErrors errors;
        if (size == 1) {
          errors.run([&] { row_top_k(0); });
        } else {
#pragma omp parallel for schedule(dynamic)
          for (std::size_t j = 0; j < size; ++j) errors.run([&] { row_top_k(j); });
        }
        errors.rethrow();
        st.refined += refined;
        st.tightened += tightened;
        st.walked += walked;
      });
  if (stats) *stats = st;
  return res;
}

std::unique_ptr<WalkingBatch> CpuSearcher::walking_batch(const QuerySet& queries, std::size_t begin,
                                                         std::size_t end,
                                                         const SearchOptions& opt) const {
  check_query_words(index_, queries);
  const Rows rows = top_k_rows(opt);
  // The memory the plan of the batch holding `begin` leaves for the word distances.
  std::size_t cache_budget = 0;
  for (const BatchPlan& plan : plan_batches(index_, queries, opt, options_, rows))
    if (plan.begin <= begin && begin < plan.end) cache_budget = plan.cache_budget;
  auto out = std::make_unique<WalkingBatch>();
  if (const std::optional<Phase1> p1 = phase1(opt)) out->phase1 = std::make_unique<Phase1>(*p1);
  out->distance =
      implementation(opt.method)
          .cpu.make({index_, {queries, begin, end}, opt, out->phase1.get(), cache_budget, rows});
  if (!out->distance->walks()) return nullptr;
  out->distance->compute(nullptr);  // a walk writes no rows
  return out;
}

void CpuSearcher::all_distances(const QuerySet& queries, const SearchOptions& opt,
                                const RowSink& sink, SearchStats* stats) const {
  check_query_words(index_, queries);
  const Index& index = index_;
  const std::size_t n = index.n_docs();
  SearchStats st;
  const std::optional<Phase1> p1 = phase1(opt);
  for_each_batch(index, queries, opt, options_, p1 ? &*p1 : nullptr, Rows::exact, st,
                 [&](std::size_t first, std::size_t size, const BatchDistance& dist, float* block) {
                   if (!dist.exact()) {
                     for (std::size_t j = 0; j < size; ++j) refine_row(dist, j, block + j * n, n);
                     st.refined += size * n;
                   }
                   sink(first, size, block);
                 });
  if (stats) *stats = st;
}

SearchResults search(const Index& index, const QuerySet& queries, std::size_t k,
                     const SearchOptions& options, SearchStats* stats) {
  return CpuSearcher(index).search(queries, k, options, stats);
}

void pairwise(const Index& index, const QuerySet& queries, const SearchOptions& options,
              const RowSink& sink, SearchStats* stats) {
  CpuSearcher(index).pairwise(queries, options, sink, stats);
}

}  // namespace lcrwmd
