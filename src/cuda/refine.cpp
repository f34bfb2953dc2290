#include "cuda/refine.h"

#include <algorithm>
#include <limits>

#include "core/numerics.h"
#include "cuda/check.h"
#include "cuda/sort_key.h"

namespace lcrwmd::cuda {
namespace {

// Documents a query refines per round after its first ones: the CPU's chunk on a 16-core
// machine (32 per thread), so that the GPU computes D2 for no more documents than it does.
constexpr std::size_t kChunk = 512;

std::uint64_t worst_key(const TopK& best) {
  return best.full()
             ? sort_key(best.worst().distance, static_cast<std::uint32_t>(best.worst().index))
             : std::numeric_limits<std::uint64_t>::max();
}

}  // namespace

void Refiner::exact(const float* bounds, std::size_t n, const ReverseArgs& rev, std::size_t n_pairs,
                    std::vector<TopK>& best, cudaStream_t s) {
  if (n_pairs == 0) return;
  const std::uint32_t* docs = pairs_.data();
  const std::uint32_t* queries = pairs_.data() + n_pairs;
  device_pairs_.upload(pairs_.data(), 2 * n_pairs, s);
  device_exact_.reserve(n_pairs);
  reverse_pairs(rev, device_pairs_.data(), device_pairs_.data() + n_pairs, n_pairs, bounds, n,
                device_exact_.data(), s);
  host_exact_.reserve(n_pairs);
  LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_exact_.data(), device_exact_.data(),
                                    n_pairs * sizeof(float), cudaMemcpyDeviceToHost, s));
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
  for (std::size_t l = 0; l < n_pairs; ++l)
    best[queries[l]].push({host_exact_.data()[l], static_cast<std::int64_t>(docs[l])});
}

std::vector<std::vector<Neighbor>> Refiner::topk(const float* bounds, std::size_t n, std::size_t k,
                                                 const ReverseArgs& rev, TopKSelector& selector,
                                                 cudaStream_t s, std::size_t& refined) {
  const std::size_t nq = static_cast<std::size_t>(rev.q.n_queries);
  std::vector<TopK> best(nq, TopK(k));
  std::vector<std::vector<Neighbor>> out(nq);
  if (k == 0 || n == 0 || nq == 0) return out;
  // The few best bounds first: they usually settle a good k-th best.
  const std::size_t first = numerics::first_refined(k, n);
  selector.select(bounds, nq, n, n, first, first_, s);
  pairs_.reserve(2 * nq * first);
  for (std::size_t j = 0; j < nq; ++j)
    for (std::size_t r = 0; r < first; ++r) {
      pairs_.data()[j * first + r] = key_doc(first_[j * first + r]);
      pairs_.data()[nq * first + j * first + r] = static_cast<std::uint32_t>(j);
    }
  exact(bounds, n, rev, nq * first, best, s);
  refined += nq * first;
  if (first < n) {
    // Then the documents ranked after those whose bound still beats the k-th best, sorted.
    std::vector<std::uint64_t> lo(nq), hi(nq);
    for (std::size_t j = 0; j < nq; ++j) {
      lo[j] = first_[j * first + first - 1];
      hi[j] = worst_key(best[j]);
    }
    selector.collect_between(bounds, nq, n, n, lo, hi, offsets_, candidates_, s);
    std::vector<std::uint64_t> cursor(offsets_.begin(), offsets_.end() - 1);
    for (;;) {
      std::size_t n_pairs = 0;
      std::vector<std::uint32_t> docs, queries;
      for (std::size_t j = 0; j < nq; ++j) {
        const std::uint64_t end = offsets_[j + 1];
        for (std::size_t taken = 0; cursor[j] < end && taken < kChunk; ++taken, ++cursor[j]) {
          const std::uint64_t key = candidates_[cursor[j]];
          // D >= bound: this document and every later one lose against the k-th best.
          if (key >= worst_key(best[j])) {
            cursor[j] = end;
            break;
          }
          docs.push_back(key_doc(key));
          queries.push_back(static_cast<std::uint32_t>(j));
        }
      }
      n_pairs = docs.size();
      if (n_pairs == 0) break;
      pairs_.reserve(2 * n_pairs);
      std::copy(docs.begin(), docs.end(), pairs_.data());
      std::copy(queries.begin(), queries.end(), pairs_.data() + n_pairs);
      exact(bounds, n, rev, n_pairs, best, s);
      refined += n_pairs;
    }
  }
  for (std::size_t j = 0; j < nq; ++j) out[j] = best[j].take_sorted();
  return out;
}

}  // namespace lcrwmd::cuda
