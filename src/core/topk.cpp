#include "lcrwmd/topk.h"

#include <omp.h>

#include <algorithm>

namespace lcrwmd {

TopK::TopK(std::size_t k) : k_(k) { heap_.reserve(k); }

void TopK::push(const Neighbor& n) {
  if (!accepts(n)) return;
  if (full()) {
    std::pop_heap(heap_.begin(), heap_.end());
    heap_.back() = n;
  } else {
    heap_.push_back(n);
  }
  std::push_heap(heap_.begin(), heap_.end());
}

void TopK::merge(const TopK& other) {
  for (const Neighbor& n : other.heap_) push(n);
}

std::vector<Neighbor> TopK::take_sorted() {
  std::sort_heap(heap_.begin(), heap_.end());
  return std::move(heap_);
}

std::vector<Neighbor> select_topk(std::span<const float> distances, std::size_t k) {
  const std::size_t n = distances.size();
  k = std::min(k, n);
  if (k == 0) return {};
  const int threads = omp_in_parallel() || n < 65536 ? 1 : omp_get_max_threads();
  std::vector<TopK> partial(static_cast<std::size_t>(threads), TopK(k));
#pragma omp parallel num_threads(threads)
  {
    TopK& mine = partial[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      // Compare the distance alone first: the common case is a clear reject.
      if (mine.full() && distances[i] > mine.worst().distance) continue;
      mine.push({distances[i], static_cast<std::int64_t>(i)});
    }
  }
  for (std::size_t t = 1; t < partial.size(); ++t) partial[0].merge(partial[t]);
  return partial[0].take_sorted();
}

std::vector<std::vector<Neighbor>> merge_topk(
    const std::vector<std::vector<std::vector<Neighbor>>>& shards, std::size_t n_queries,
    std::size_t k) {
  std::vector<std::vector<Neighbor>> out(n_queries);
  for (std::size_t q = 0; q < n_queries; ++q) {
    TopK best(k);
    for (const auto& shard : shards)
      for (const Neighbor& n : shard.at(q))
        if (n.index >= 0) best.push(n);
    out[q] = best.take_sorted();
  }
  return out;
}

}  // namespace lcrwmd
