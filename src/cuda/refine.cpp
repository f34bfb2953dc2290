#include "cuda/refine.h"

#include <algorithm>
#include <bit>
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
                    bool prune, std::vector<TopK>& best, cudaStream_t s, SearchStats& stats) {
  if (n_pairs == 0) return;
  const std::size_t nq = best.size();
  std::uint32_t* host = pairs_.data();
  const std::uint32_t* docs = host;
  const std::uint32_t* queries = host + n_pairs;
  if (prune)
    for (std::size_t j = 0; j < nq; ++j) {
      const bool full = best[j].full();
      host[2 * n_pairs + j] = std::bit_cast<std::uint32_t>(
          full ? best[j].worst().distance : std::numeric_limits<float>::infinity());
      host[2 * n_pairs + nq + j] = full ? static_cast<std::uint32_t>(best[j].worst().index)
                                        : std::numeric_limits<std::uint32_t>::max();
    }
  device_pairs_.upload(host, 2 * n_pairs + (prune ? 2 * nq : 0), s);
  device_exact_.reserve(n_pairs);
  const std::uint32_t* device = device_pairs_.data();
  const Worst worst =
      prune ? Worst{reinterpret_cast<const float*>(device + 2 * n_pairs), device + 2 * n_pairs + nq}
            : Worst{};
  reverse_pairs(rev, device, device + n_pairs, n_pairs, bounds, n, worst, device_exact_.data(), s);
  host_exact_.reserve(n_pairs);
  LCRWMD_CUDA_CHECK(cudaMemcpyAsync(host_exact_.data(), device_exact_.data(),
                                    n_pairs * sizeof(float), cudaMemcpyDeviceToHost, s));
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
  if (prune) stats.tightened += n_pairs;
  for (std::size_t l = 0; l < n_pairs; ++l) {
    const float d = host_exact_.data()[l];
    if (d < 0.0f) continue;  // its tightened bound lost: D2 not computed
    ++stats.refined;
    best[queries[l]].push({d, static_cast<std::int64_t>(docs[l])});
  }
}

std::vector<std::vector<Neighbor>> Refiner::topk(const float* bounds, std::size_t n, std::size_t k,
                                                 const ReverseArgs& rev, TopKSelector& selector,
                                                 cudaStream_t s, SearchStats& stats) {
  const std::size_t nq = static_cast<std::size_t>(rev.q.n_queries);
  // Certified LC-RWMD: D2's lower bound from the cache first (ACT's direction has none).
  const bool prune = rev.certified.row_terms && rev.act_reach == 0;
  std::vector<TopK> best(nq, TopK(k));
  std::vector<std::vector<Neighbor>> out(nq);
  if (k == 0 || n == 0 || nq == 0) return out;
  // The few best bounds first: they usually settle a good k-th best.
  const std::size_t first = numerics::first_refined(k, n);
  selector.select(bounds, nq, n, n, first, first_, s);
  pairs_.reserve(2 * nq * first + 2 * nq);
  for (std::size_t j = 0; j < nq; ++j)
    for (std::size_t r = 0; r < first; ++r) {
      pairs_.data()[j * first + r] = key_doc(first_[j * first + r]);
      pairs_.data()[nq * first + j * first + r] = static_cast<std::uint32_t>(j);
    }
  exact(bounds, n, rev, nq * first, prune, best, s, stats);
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
      pairs_.reserve(2 * n_pairs + 2 * nq);
      std::copy(docs.begin(), docs.end(), pairs_.data());
      std::copy(queries.begin(), queries.end(), pairs_.data() + n_pairs);
      exact(bounds, n, rev, n_pairs, prune, best, s, stats);
    }
  }
  for (std::size_t j = 0; j < nq; ++j) out[j] = best[j].take_sorted();
  return out;
}

}  // namespace lcrwmd::cuda
