#include "methods/batch_plan.h"

#include <omp.h>

#include <algorithm>

#include "methods/batch_distance.h"
#include "methods/phase1.h"

namespace lcrwmd {
namespace {

bool bounds_by_act(const SearchOptions& opt) {
  return opt.method == Method::act || opt.method == Method::ict;
}
// WMD's bounds and symmetric ACT's are symmetric LC-RWMD's: same phase 1, same cache.
bool caches_word_distances(const SearchOptions& opt) {
  return opt.method == Method::wmd ||
         (opt.symmetric && (opt.method == Method::lc_rwmd || bounds_by_act(opt)));
}

// Floats a query keeps per vocabulary word beyond the cache: LC-RWMD's minimum; ACT's k+1
// nearest words' (cost, weight) pairs (ICT: all of the query's words), with symmetric
// LC-RWMD's minimum beside them.
std::size_t phase1_floats(const SearchOptions& opt, std::size_t words) {
  if (bounds_by_act(opt))
    return 2 * reachable_words(act_steps(opt), words) + (opt.symmetric ? 1 : 0);
  return opt.method == Method::lc_rwmd || opt.method == Method::wmd ? 1 : 0;
}

// Symmetric LC-RWMD caches 4·v·h bytes of word distances per query. Where the budget admits only
// a few queries per batch, their phase-1 minima (v x batch) outgrow the CPU caches while too few
// queries share each row the sparse pass gathers, and one query at a time is faster (Set 1,
// 2 GiB: ~10 queries per batch took 1.26x the single-query time; BENCHMARKS.md).
constexpr std::size_t kMinSymmetricBatch = 16;
// WMD's batch only shares phase 1 among queries whose pruned solves then dominate; a smaller one
// keeps its cache of word distances smaller and closer to the CPU (bbcsport top-10: 16 queries
// per batch took 2-8% less CPU time than 64 in three alternating pairs of runs).
constexpr std::size_t kMaxWmdBatch = 16;

std::vector<BatchPlan> plan_with_max(const Index& index, const QuerySet& qs,
                                     const SearchOptions& opt, const CpuOptions& cpu,
                                     std::size_t max_batch) {
  const std::size_t n = index.n_docs(), v = index.vocab_size();
  const std::size_t per_word = phase1_scratch_per_word(index, opt, cpu);
  std::vector<BatchPlan> plans;
  std::size_t q = 0;
  while (q < qs.size()) {
    const std::size_t begin = q;
    std::size_t bytes = 0;  // per query: its row of results and its phase-1 arrays
    do {
      const std::size_t next = bytes + 4 * (n + v * phase1_floats(opt, qs.length(q)));
      const std::size_t words = qs.indptr[q + 1] - qs.indptr[begin];
      const std::size_t cache = caches_word_distances(opt) ? 4 * v * words : 0;
      if (q > begin && next + cache + per_word * words > cpu.memory_budget) break;
      bytes = next;
      ++q;
    } while (q < qs.size() && q - begin < max_batch);
    plans.push_back({begin, q, cpu.memory_budget > bytes ? cpu.memory_budget - bytes : 0});
  }
  return plans;
}

}  // namespace

std::size_t phase1_scratch_per_word(const Index& index, const SearchOptions& opt,
                                    const CpuOptions& cpu) {
  if (opt.method == Method::wcd || opt.method == Method::rwmd) return 0;
  const std::size_t rows =
      std::min(cpu.tile_rows ? cpu.tile_rows : kDefaultTileRows, index.vocab_size());
  return static_cast<std::size_t>(omp_get_max_threads()) * rows * sizeof(float) *
         (opt.symmetric || opt.method == Method::wmd ? 2 : 1);
}

std::vector<BatchPlan> plan_batches(const Index& index, const QuerySet& qs,
                                    const SearchOptions& opt, const CpuOptions& cpu) {
  // batch 0: as many queries as the budget holds.
  const std::size_t asked = opt.batch ? opt.batch : qs.size();
  const std::size_t max_batch =
      std::max<std::size_t>(opt.method == Method::wmd ? std::min(asked, kMaxWmdBatch) : asked, 1);
  std::vector<BatchPlan> plans = plan_with_max(index, qs, opt, cpu, max_batch);
  // Cramped: the memory budget, not the requested batch size, keeps batches small.
  const bool cramped =
      caches_word_distances(opt) && plans.size() > 1 &&
      plans.front().end - plans.front().begin < std::min(kMinSymmetricBatch, max_batch);
  return cramped ? plan_with_max(index, qs, opt, cpu, 1) : plans;
}

}  // namespace lcrwmd
