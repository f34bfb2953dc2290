#pragma once
// A bound on LC-RWMD's query-to-document side D2 = sum_t F_t min_{u in doc} c(t, u) between
// B2 (phase 2's, from each query word's one nearest other word) and the cache's gather (a row
// of query-word distances read per document word).
//
// Phase 1 keeps, for every batch word t, its least lower bounds over the vocabulary with their
// words (NearestWords): N(t), the kNeighbours words of least bound, and r(t), the square root
// of the next bound, so that every word outside N(t) is at least r(t) from t. A document's
// word nearest to t is either outside N(t), at least r(t) away, or inside, short of r(t) by at
// most that word's r(t) - sqrt(lo(t, u)) >= 0, so
//   min_{u in doc} c(t, u) >= r(t) - sum_{u in doc, u in N(t)} (r(t) - sqrt(lo(t, u)))
// and, weighted by F_t and summed over the query's words,
//   D2 >= R_j - sum_{u in doc} G_j(u),  R_j = sum_t F_t r(t),
//   G_j(u) = sum_{t : u in N(t)} F_t (r(t) - sqrt(lo(t, u))):
// linear in the document's words, one lookup each in a table of the query's few neighbours
// where the cache's gather reads a row of all the query's words (20news: ~90). On 20news it
// leaves a sixth of the documents that B2 lets through for the gather.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/batch_words.h"
#include "lcrwmd/index.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

// Neighbours per batch word: more cost phase 1 more insertions and the table more entries,
// and rule out fewer documents each; fewer leave more of B2's candidates to the gather
// (BENCHMARKS.md, "A tighter bound before the gather").
inline constexpr std::size_t kNeighbours = 16;

// Each batch word's kNeighbours + 1 least lower bounds over the vocabulary, with their words.
// One per thread while phase 1 runs (add_strip), merged into one (merge), then sorted.
class NearestWords {
 public:
  static constexpr std::size_t kKept = kNeighbours + 1;
  struct Entry {
    float lo;  // squared distance's lower bound
    std::uint32_t word;
  };

  explicit NearestWords(std::size_t columns);

  // Vocabulary rows [u0, u0 + rows) of a strip: batch word c's bounds at strip + c * stride.
  // NaN is passed over.
  void add_strip(std::size_t u0, std::size_t rows, const float* strip, std::size_t stride);
  void merge(const NearestWords& other);
  // Each word's entries in ascending order of bound (then word); call once, after the merges.
  void sort();

  // After sort(): batch word c's entries, kKept of them, or every vocabulary word where there
  // are fewer.
  std::span<const Entry> of(std::size_t c) const { return {kept_.data() + c * kRoom, size_[c]}; }
  // The least bound of c's entries whose word is not `self` (+inf where none).
  float nearest_other(std::size_t c, std::int64_t self) const;

 private:
  // Room for four times the kept entries per word: a full word's entries are cut back to the
  // kKept least at once (one selection per 3 kKept new entries, where a heap would reorder
  // itself at each one: a fifth of a 20news search's time).
  static constexpr std::size_t kRoom = 4 * kKept;
  // Batch word c's entries cut back to the kKept least (the limit then the greatest of
  // them); returns how many are left.
  std::size_t cut(std::size_t c);
  // Entries entry(i) for i < n, those under c's limit kept.
  template <typename EntryAt>
  void append(std::size_t c, std::size_t n, EntryAt entry);

  std::vector<Entry> kept_;  // kRoom per batch word, in no order until sort()
  std::vector<std::uint8_t> size_;
  std::vector<float> limit_;  // what an entry must be under to be kept: the kKept-th least
                              // of those cut back, +inf before
  std::vector<std::uint32_t> hits_;
};

// The bound above for one batch; lower() is thread-safe.
class NeighbourhoodBound {
 public:
  NeighbourhoodBound(const Index& index, QueryRange queries, const BatchWords& batch,
                     const NearestWords& nearest);

  // A lower bound of D2 of the batch's query j and a document, >= 0.
  float lower(std::size_t j, std::size_t doc) const;

 private:
  // r(t) of batch word c and how many of its entries form N(t).
  struct Ring {
    float r;
    std::size_t inside;
  };
  Ring ring(std::size_t c) const;

  const Index& index_;
  QueryRange q_;
  const BatchWords& batch_;
  const NearestWords& nearest_;
  std::vector<double> total_;       // R_j per query
  const std::uint64_t generation_;  // tells this batch's tables (per thread) from another's
};

}  // namespace lcrwmd
