#pragma once
// Top-k selection by ascending distance, ties broken by the smaller index, and the exact
// merge of per-shard top-k lists. The same order everywhere makes results reproducible.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lcrwmd {

struct Neighbor {
  float distance;
  std::int64_t index;
};

inline bool operator<(const Neighbor& a, const Neighbor& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

// Keeps the k smallest neighbours seen so far in a max-heap.
class TopK {
 public:
  explicit TopK(std::size_t k);
  bool full() const { return heap_.size() == k_; }
  std::size_t size() const { return heap_.size(); }
  // The current k-th best; only meaningful when full().
  const Neighbor& worst() const { return heap_.front(); }
  bool accepts(const Neighbor& n) const { return k_ > 0 && (!full() || n < worst()); }
  void push(const Neighbor& n);
  void merge(const TopK& other);
  // Best first; leaves the heap empty.
  std::vector<Neighbor> take_sorted();

 private:
  std::size_t k_;
  std::vector<Neighbor> heap_;
};

// The k best of distances[0..n) (index = position), using all threads.
std::vector<Neighbor> select_topk(std::span<const float> distances, std::size_t k);

// Merges per-shard results: shard s holds n_queries rows of k_s neighbours (best first,
// index < 0 marks padding) whose indices are already global. Returns n_queries rows of k.
std::vector<std::vector<Neighbor>> merge_topk(
    const std::vector<std::vector<std::vector<Neighbor>>>& shards, std::size_t n_queries,
    std::size_t k);

}  // namespace lcrwmd
