#include "methods/batch_plan.h"

#include <algorithm>

namespace lcrwmd {
namespace {

// WMD's bounds are symmetric LC-RWMD's: same phase 1, same cache.
bool uses_lc_rwmd(const SearchOptions& opt) {
  return opt.method == Method::lc_rwmd || opt.method == Method::wmd;
}
bool caches_word_distances(const SearchOptions& opt) {
  return opt.method == Method::wmd || (opt.method == Method::lc_rwmd && opt.symmetric);
}

// Symmetric LC-RWMD caches 4·v·h bytes of word distances per query. Where the budget admits only
// a few queries per batch, their phase-1 minima (v x batch) outgrow the CPU caches while too few
// queries share each row the sparse pass gathers, and one query at a time is faster (Set 1,
// 2 GiB: ~10 queries per batch took 1.26x the single-query time; BENCHMARKS.md).
constexpr std::size_t kMinSymmetricBatch = 16;

std::vector<BatchPlan> plan_with_max(const Index& index, const QuerySet& qs,
                                     const SearchOptions& opt, const CpuOptions& cpu,
                                     std::size_t max_batch) {
  const std::size_t n = index.n_docs(), v = index.vocab_size();
  // Per query: its row of results, and phase 1's v minima (act: the k+1 nearest costs and
  // weights).
  const std::size_t phase1 =
      opt.method == Method::act ? 2 * (opt.act_steps + 1) * v : (uses_lc_rwmd(opt) ? v : 0);
  const std::size_t per_query = 4 * (n + phase1);
  std::vector<BatchPlan> plans;
  std::size_t q = 0;
  while (q < qs.size()) {
    const std::size_t begin = q;
    std::size_t bytes = 0;
    do {
      const std::size_t words = qs.indptr[q + 1] - qs.indptr[begin];
      const std::size_t cache = caches_word_distances(opt) ? 4 * v * words : 0;
      if (q > begin && per_query * (q - begin + 1) + cache > cpu.memory_budget) break;
      bytes = per_query * (q - begin + 1);
      ++q;
    } while (q < qs.size() && q - begin < max_batch);
    plans.push_back({begin, q, cpu.memory_budget > bytes ? cpu.memory_budget - bytes : 0});
  }
  return plans;
}

}  // namespace

std::vector<BatchPlan> plan_batches(const Index& index, const QuerySet& qs,
                                    const SearchOptions& opt, const CpuOptions& cpu) {
  const std::size_t max_batch = std::max<std::size_t>(opt.batch, 1);
  std::vector<BatchPlan> plans = plan_with_max(index, qs, opt, cpu, max_batch);
  // Cramped: the memory budget, not the requested batch size, keeps batches small.
  const bool cramped =
      caches_word_distances(opt) && plans.size() > 1 &&
      plans.front().end - plans.front().begin < std::min(kMinSymmetricBatch, max_batch);
  return cramped ? plan_with_max(index, qs, opt, cpu, 1) : plans;
}

}  // namespace lcrwmd
