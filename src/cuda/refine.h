#pragma once
// Symmetric LC-RWMD top-k on the device from a batch's bounds max(D1, B2) <= D, refining like
// the CPU (cpu_searcher.cpp pruned_topk): per query, the exact D = max(bound, D2) first for its
// few best bounds, then for the other documents in ascending bound order, stopping at the first
// whose bound loses against the k-th best, in chunks of the CPU's size. Certified (the cache
// holds phase 1's lower bounds), each document's bound is first tightened with D2's lower bound
// from the cache, as the CPU's is, and D2 is computed only where that still beats the k-th best
// (both in one kernel: reverse_pairs with Worst). Every query of the batch advances together:
// one kernel and one copy per round, so a batch costs a handful of round trips however many
// queries it has.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/select_k.h"
#include "lcrwmd/search.h"
#include "lcrwmd/topk.h"

namespace lcrwmd::cuda {

class Refiner {
 public:
  // bounds[j * n + i] for the batch's queries j < rev.q.n_queries and the chunk's documents
  // i < n (chunk-local, as in rev.docs). Returns each query's min(k, n) best, documents
  // chunk-local; adds the pairs whose D2 was computed to stats.refined and those whose bound
  // was tightened to stats.tightened.
  std::vector<std::vector<Neighbor>> topk(const float* bounds, std::size_t n, std::size_t k,
                                          const ReverseArgs& rev, TopKSelector& selector,
                                          cudaStream_t s, SearchStats& stats);

  // Device scratch, given back.
  void release() {
    device_pairs_.release();
    device_exact_.release();
  }

 private:
  // D for the listed pairs (pairs_ holds docs, then queries, then with `prune` each query's
  // k-th best as distance bits and document), pushed into best.
  void exact(const float* bounds, std::size_t n, const ReverseArgs& rev, std::size_t n_pairs,
             bool prune, std::vector<TopK>& best, cudaStream_t s, SearchStats& stats);

  PinnedArray<std::uint32_t> pairs_;
  PinnedArray<float> host_exact_;
  DeviceArray<std::uint32_t> device_pairs_;
  DeviceArray<float> device_exact_;
  std::vector<std::uint64_t> first_, offsets_, candidates_;
};

}  // namespace lcrwmd::cuda
