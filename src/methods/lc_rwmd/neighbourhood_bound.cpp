#include "methods/lc_rwmd/neighbourhood_bound.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/numerics.h"
#include "cpu/simd.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
std::atomic<std::uint64_t> generations{0};

}  // namespace

NearestWords::NearestWords(std::size_t columns)
    : kept_(columns * kRoom), size_(columns, 0), limit_(columns, kInf), hits_(columns) {}

std::size_t NearestWords::cut(std::size_t c) {
  Entry* kept = kept_.data() + c * kRoom;
  if (size_[c] <= kKept) return size_[c];
  std::nth_element(kept, kept + (kKept - 1), kept + size_[c],
                   [](const Entry& a, const Entry& b) { return a.lo < b.lo; });
  limit_[c] = kept[kKept - 1].lo;
  return kKept;
}

template <typename EntryAt>
void NearestWords::append(std::size_t c, std::size_t n, EntryAt entry) {
  Entry* kept = kept_.data() + c * kRoom;
  for (std::size_t i0 = 0; i0 < n; i0 += kRoom - kKept) {
    const std::size_t len = std::min(n - i0, kRoom - kKept);
    std::size_t size = size_[c] + len > kRoom ? cut(c) : size_[c];
    // Every entry written, those under the limit kept (no branch to mispredict).
    const float limit = limit_[c];
    for (std::size_t i = i0; i < i0 + len; ++i) {
      kept[size] = entry(i);
      size += kept[size].lo < limit;
    }
    size_[c] = static_cast<std::uint8_t>(size);
  }
}

void NearestWords::add_strip(std::size_t u0, std::size_t rows, const float* strip,
                             std::size_t stride) {
  // Most strips hold nothing under any word's limit once the first rows are in: one compare
  // per entry finds the few words that do.
  const std::size_t hit =
      cpu::kernels().columns_below(strip, stride, rows, limit_.data(), size_.size(), hits_.data());
  for (std::size_t h = 0; h < hit; ++h) {
    const float* x = strip + hits_[h] * stride;
    append(hits_[h], rows, [&](std::size_t r) {
      return Entry{x[r], static_cast<std::uint32_t>(u0 + r)};
    });
  }
}

void NearestWords::merge(const NearestWords& other) {
  for (std::size_t c = 0; c < size_.size(); ++c) {
    const Entry* e = other.kept_.data() + c * kRoom;
    append(c, other.size_[c], [&](std::size_t i) { return e[i]; });
  }
}

void NearestWords::sort() {
  for (std::size_t c = 0; c < size_.size(); ++c) {
    Entry* e = kept_.data() + c * kRoom;
    std::sort(e, e + size_[c], [](const Entry& a, const Entry& b) {
      return a.lo < b.lo || (a.lo == b.lo && a.word < b.word);
    });
    size_[c] = static_cast<std::uint8_t>(std::min<std::size_t>(size_[c], kKept));
  }
}

float NearestWords::nearest_other(std::size_t c, std::int64_t self) const {
  for (const Entry& e : of(c))
    if (static_cast<std::int64_t>(e.word) != self) return e.lo;
  return kInf;
}

NeighbourhoodBound::NeighbourhoodBound(const Index& index, QueryRange queries,
                                       const BatchWords& batch, const NearestWords& nearest)
    : index_(index),
      q_(queries),
      batch_(batch),
      nearest_(nearest),
      total_(queries.size(), 0.0),
      generation_(++generations) {
  for (std::size_t j = 0; j < q_.size(); ++j) {
    const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
    const std::uint64_t c0 = batch_.cols_indptr[j];
    for (std::uint64_t p = c0; p < batch_.cols_indptr[j + 1]; ++p)
      total_[j] += double{f[p - c0]} * ring(batch_.cols[p]).r;
  }
}

NeighbourhoodBound::Ring NeighbourhoodBound::ring(std::size_t c) const {
  const auto e = nearest_.of(c);
  if (e.empty()) return {0.0f, 0};
  // Fewer entries than kept: every vocabulary word is one, and none lies outside N(t); the
  // largest bound then serves as r(t) (its own shortfall is 0).
  const bool all = e.size() < NearestWords::kKept;
  return {std::sqrt(std::max(0.0f, e.back().lo)), all ? e.size() : kNeighbours};
}

float NeighbourhoodBound::lower(std::size_t j, std::size_t doc) const {
  // The query's table G_j over the vocabulary, made once per thread and query (a batch's
  // queries are tightened one after another on one thread each, or one query on every
  // thread) and cleared through the words it set.
  struct Table {
    std::uint64_t generation = 0;
    std::size_t query = 0;
    std::vector<double> g;
    std::vector<std::uint32_t> set;
  };
  thread_local Table t;
  if (t.generation != generation_ || t.query != j) {
    for (const std::uint32_t u : t.set) t.g[u] = 0.0;
    t.set.clear();
    t.g.resize(index_.vocab_size(), 0.0);
    t.generation = generation_, t.query = j;
    const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
    const std::uint64_t c0 = batch_.cols_indptr[j];
    for (std::uint64_t p = c0; p < batch_.cols_indptr[j + 1]; ++p) {
      const std::uint32_t c = batch_.cols[p];
      const Ring ring = this->ring(c);
      const auto e = nearest_.of(c);
      for (std::size_t i = 0; i < ring.inside; ++i) {
        const std::uint32_t u = e[i].word;
        if (t.g[u] == 0.0) t.set.push_back(u);
        t.g[u] += double{f[p - c0]} * (ring.r - std::sqrt(std::max(0.0f, e[i].lo)));
      }
    }
  }
  double shortfall = 0;
  for (const std::uint32_t u : index_.doc_words(doc)) shortfall += t.g[u];
  // D2 as refine() sums it rounds each of the query's h terms and sums them in float: lowered
  // by a fraction that covers that (and kB2Slack's margin, as B2), the bound stays under it;
  // the double sums' own rounding, next to it, by a part of their size.
  const double total = total_[j], h = static_cast<double>(q_.set.length(q_.begin + j));
  const double bound = (total - shortfall) * (1.0 - numerics::kB2Slack - (h + 2) * 0x1p-24) -
                       0x1p-40 * (total + shortfall);
  return static_cast<float>(std::max(0.0, bound));
}

}  // namespace lcrwmd
