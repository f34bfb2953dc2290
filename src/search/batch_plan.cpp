#include "search/batch_plan.h"

#include <omp.h>

#include <algorithm>

#include "methods/batch_distance.h"
#include "methods/lc_rwmd/phase1.h"
#include "methods/method_impl.h"

namespace lcrwmd {

Rows top_k_rows(const SearchOptions& opt) {
  return opt.prune && implementation(opt.method).cpu.bounds_rows &&
                 opt.direction != Direction::query_to_document
             ? Rows::bounds
             : Rows::distances;
}

namespace {

// The methods that keep phase 1's word distances keep them for D2: symmetric and
// query-to-document (WMD is symmetric).
bool caches_word_distances(const SearchOptions& opt) {
  return implementation(opt.method).cpu.caches_word_distances &&
         opt.direction != Direction::document_to_query;
}

// Bytes a query keeps per vocabulary word beyond the cache: LC-RWMD's minimum (and, for its
// bounds, what refining needs); ACT's k+1 nearest words' (cost, weight) pairs (ICT: all of
// the query's words), with symmetric LC-RWMD's minimum beside them (query-to-document: that
// minimum's place alone, which holds D2's bound).
std::size_t phase1_bytes(const SearchOptions& opt, std::size_t words, Rows rows) {
  switch (implementation(opt.method).cpu.word_pass) {
    case WordPass::none:
      return 0;
    case WordPass::nearest:
      return lc_rwmd_pair_bytes(rows);
    case WordPass::capped:
      if (opt.direction == Direction::query_to_document) return sizeof(float);
      return sizeof(float) * (2 * reachable_words(act_steps(opt), words) +
                              (opt.direction == Direction::symmetric ? 1 : 0));
  }
  return 0;
}

// A query's row of results and what phase 1 keeps for it.
std::size_t row_bytes(const Index& index, const SearchOptions& opt, std::size_t words, Rows rows) {
  return sizeof(float) * index.n_docs() + index.vocab_size() * phase1_bytes(opt, words, rows);
}

// Symmetric LC-RWMD caches 4·v·h bytes of word distances per query. Where the budget admits only
// a few queries per batch, their phase-1 minima (v x batch) outgrow the CPU caches while too few
// queries share each row the sparse pass gathers, and one query at a time is faster (Set 1 in
// BENCHMARKS.md, "One query and batches on the CPU").
constexpr std::size_t kMinSymmetricBatch = 16;
// LC-RWMD's batches hold at most this many query words (repeats counted) however much memory
// there is: past it the strip of phase 1's bounds (64 bytes per distinct batch word) outgrows
// the L2 cache, and the batch's minima (v x batch floats, fresh memory) its first touches cost
// more than the shared GEMM columns save. A top-k keeps four times the bytes per (vocabulary
// word, query) (lc_rwmd_pair_bytes) and stops at half as many words, faster and in less memory
// (both measured on 20news: BENCHMARKS.md, "Precision", where batches stop at 65,536 words).
constexpr std::size_t kMaxNearestBatchWords = std::size_t{1} << 16;
std::size_t max_nearest_batch_words(Rows rows) {
  return rows == Rows::bounds ? kMaxNearestBatchWords / 2 : kMaxNearestBatchWords;
}
std::vector<BatchPlan> plan_with_max(const Index& index, const QuerySet& qs,
                                     const SearchOptions& opt, const CpuOptions& cpu, Rows rows,
                                     std::size_t max_batch) {
  const std::size_t v = index.vocab_size();
  const std::size_t per_word = phase1_scratch_per_word(index, opt, cpu);
  const bool nearest = implementation(opt.method).cpu.word_pass == WordPass::nearest;
  std::vector<BatchPlan> plans;
  std::size_t q = 0;
  while (q < qs.size()) {
    const std::size_t begin = q;
    std::size_t bytes = 0;  // per query: its row of results and its phase-1 arrays
    do {
      const std::size_t next = bytes + row_bytes(index, opt, qs.length(q), rows);
      const std::size_t words = qs.indptr[q + 1] - qs.indptr[begin];
      const std::size_t cache = caches_word_distances(opt) ? 4 * v * words : 0;
      if (q > begin && next + cache + per_word * words > cpu.memory_budget) break;
      if (q > begin && nearest && words > max_nearest_batch_words(rows)) break;
      bytes = next;
      ++q;
    } while (q < qs.size() && q - begin < max_batch);
    plans.push_back({begin, q, cpu.memory_budget > bytes ? cpu.memory_budget - bytes : 0});
  }
  return plans;
}

}  // namespace

std::size_t cpu_query_bytes(const Index& index, const SearchOptions& options,
                            std::size_t query_words) {
  return row_bytes(index, options, query_words, top_k_rows(options)) +
         (caches_word_distances(options) ? sizeof(float) * index.vocab_size() * query_words : 0);
}

std::size_t phase1_scratch_per_word(const Index& index, const SearchOptions& opt,
                                    const CpuOptions& cpu) {
  if (implementation(opt.method).cpu.word_pass == WordPass::none) return 0;
  const std::size_t rows =
      std::min(cpu.tile_rows ? cpu.tile_rows : kDefaultTileRows, index.vocab_size());
  // The tile's estimates, and its lower bounds: a strip of them for LC-RWMD, all for ACT/ICT.
  const std::size_t floats =
      implementation(opt.method).cpu.word_pass == WordPass::nearest ? rows + kStripRows : 2 * rows;
  return static_cast<std::size_t>(omp_get_max_threads()) * floats * sizeof(float);
}

std::vector<BatchPlan> plan_batches(const Index& index, const QuerySet& qs,
                                    const SearchOptions& opt, const CpuOptions& cpu, Rows rows) {
  // batch 0: as many queries as the budget holds.
  const std::size_t asked = opt.batch ? opt.batch : qs.size();
  const std::size_t cap = implementation(opt.method).cpu.max_batch;
  const std::size_t max_batch = std::max<std::size_t>(cap ? std::min(asked, cap) : asked, 1);
  std::vector<BatchPlan> plans = plan_with_max(index, qs, opt, cpu, rows, max_batch);
  // Cramped: the memory budget, not the requested batch size, keeps batches small.
  const bool cramped =
      caches_word_distances(opt) && plans.size() > 1 &&
      plans.front().end - plans.front().begin < std::min(kMinSymmetricBatch, max_batch);
  return cramped ? plan_with_max(index, qs, opt, cpu, rows, 1) : plans;
}

}  // namespace lcrwmd
