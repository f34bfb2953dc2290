#pragma once
// How the CPU backend splits queries into batches that fit its memory budget.
#include <cstddef>
#include <vector>

#include "lcrwmd/cpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

// Queries [begin, end) computed together, sized so that their working memory — output rows,
// for LC-RWMD the phase-1 minima and, when symmetric, the cached word distances — fits the
// budget; cache_budget is what the rows and minima leave for that cache.
struct BatchPlan {
  std::size_t begin, end;
  std::size_t cache_budget;
};

// Consecutive batches covering every query, each of at most options.batch queries (0: no cap;
// at least one) within cpu.memory_budget where more than one query is in it; symmetric LC-RWMD and
// WMD take one query at a time where the budget would cramp batches below 16 queries.
std::vector<BatchPlan> plan_batches(const Index& index, const QuerySet& queries,
                                    const SearchOptions& options, const CpuOptions& cpu,
                                    Rows rows = Rows::distances);

// Phase 1's scratch per word of a batch: every thread's tile of estimates and lower bounds for
// each batch word (methods/lc_rwmd/phase1.h), part of a batch's working memory.
std::size_t phase1_scratch_per_word(const Index& index, const SearchOptions& options,
                                    const CpuOptions& cpu);

}  // namespace lcrwmd
