#pragma once
// lcrwmd_bench emd and merge: two parts timed alone, the EMD solver on problems from a file
// and the merge of per-shard top-k lists.
#include <cstddef>
#include <string>

#include "bench_util.h"

namespace lcrwmd::bench {

// Exact EMD on transport problems from a file: per problem int32 n, m; n + m weights, n x m
// costs and the reference answer (POT's ot.emd2), all float64. One untimed pass, then timed.
void emd_problems(const std::string& path, Report& rep);

// merge_topk on random per-shard lists (each shard's k best, ascending): what rank 0 spends
// merging the ranks' results, per query.
void merge_cost(std::size_t reps, Report& rep);

}  // namespace lcrwmd::bench
