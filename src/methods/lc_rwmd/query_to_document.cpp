#include "methods/lc_rwmd/query_to_document.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "cpu/simd.h"
#include "util/prefetch.h"

namespace lcrwmd {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

// Calls reach(u, t) for each of a document's words u and query word t of `ts` whose kept lower
// bound is at most t's least upper bound over the document's words: only there can t's nearest
// document word be, so only those distances need be exact.
template <typename Reach>
void within_reach(const WordDistanceCache& cache, std::span<const std::uint32_t> words,
                  std::size_t j, std::size_t c0, std::size_t h, std::span<const std::uint32_t> ts,
                  const Reach& reach) {
  thread_local std::vector<float> limit;
  limit.assign(h, kInf);
  for (const std::uint32_t u : words) cache.upper_min_into(u, j, limit.data());
  for (const std::uint32_t u : words) {
    const float* lo = cache.row(u) + c0;
    for (const std::uint32_t t : ts)
      if (lo[t] <= limit[t]) reach(u, t);
  }
}

// Query words 0, 1, ..., h - 1.
std::span<const std::uint32_t> every_word(std::size_t h) {
  thread_local std::vector<std::uint32_t> words;
  while (words.size() < h) words.push_back(static_cast<std::uint32_t>(words.size()));
  return {words.data(), h};
}
}  // namespace

// Each query word's nearest document word is among those whose kept lower bound is at most the
// smallest upper bound (limit), and only those are recomputed. Without the cache, from the
// vectors.
float QueryToDocument::exact(std::size_t j, std::size_t doc) const {
  const std::size_t m = index_.dim();
  const std::uint64_t c0 = batch_.cols_indptr[j], h = batch_.cols_indptr[j + 1] - c0;
  const std::uint32_t* cols = batch_.cols.data() + c0;
  const auto words = index_.doc_words(doc);
  thread_local std::vector<float> best;
  best.assign(h, kInf);
  const cpu::Kernels& k = cpu::kernels();
  if (!cache_) {
    for (const std::uint32_t u : words) {
      const float* e = index_.vector(u);
      for (std::size_t t = 0; t < h; ++t)
        best[t] = std::min(best[t], k.sq_dist(e, batch_.vectors.data() + cols[t] * m, m));
    }
    return weighted_root_sum(j, best.data());
  }
  within_reach(*cache_, words, j, c0, h, every_word(h), [&](std::uint32_t u, std::size_t t) {
    best[t] = std::min(best[t], cache_->exact(u, j, t));
  });
  return weighted_root_sum(j, best.data());
}

void QueryToDocument::exact_each(std::size_t j, std::span<const std::uint32_t> docs,
                                 float* out) const {
  const std::uint64_t c0 = batch_.cols_indptr[j], h = batch_.cols_indptr[j + 1] - c0;
  // The scratch holds h distances per word met: a long query's documents one at a time.
  constexpr std::size_t kLongest = 64;
  if (!cache_ || h > kLongest) {
    for (std::size_t i = 0; i < docs.size(); ++i) out[i] = exact(j, docs[i]);
    return;
  }
  // Each vocabulary word met gets a slot (slot[u], valid where stamp[u] is this call's), and
  // value[slot * h + t] its distance to query word t: kWanted where some document needs it,
  // kInf where none does.
  struct Scratch {
    std::vector<std::uint32_t> stamp, slot, words, wanted;
    std::vector<std::size_t> ends;
    std::vector<float> value, best;
    std::uint32_t call = 0;
  };
  thread_local Scratch s;
  constexpr float kWanted = -1.0f;
  if (s.stamp.size() != index_.vocab_size() || ++s.call == 0) {
    s.stamp.assign(index_.vocab_size(), 0);
    s.slot.resize(index_.vocab_size());
    s.call = 1;
  }
  s.words.clear();
  s.value.clear();
  s.wanted.clear();
  s.ends.clear();
  // Each document's words whose lower bound is within its least upper bound, as in exact().
  for (std::size_t i = 0; i < docs.size(); ++i) {
    // Documents read far apart (a sample): each one's offsets and words a miss to memory,
    // fetched ahead.
    if (i + 4 < docs.size()) __builtin_prefetch(index_.indptr().data() + docs[i + 4]);
    if (i + 2 < docs.size()) __builtin_prefetch(index_.doc_words(docs[i + 2]).data());
    within_reach(*cache_, index_.doc_words(docs[i]), j, c0, h, every_word(h),
                 [&](std::uint32_t u, std::size_t t) {
                   if (s.stamp[u] != s.call) {
                     s.stamp[u] = s.call;
                     s.slot[u] = static_cast<std::uint32_t>(s.words.size());
                     s.words.push_back(u);
                     s.value.resize(s.value.size() + h, kInf);
                   }
                   const std::size_t at = s.slot[u] * h + t;
                   s.value[at] = kWanted;
                   s.wanted.push_back(static_cast<std::uint32_t>(at));
                 });
    s.ends.push_back(s.wanted.size());
  }
  // The distances wanted, each once, the vectors a few words ahead fetched meanwhile.
  constexpr std::size_t kAhead = 4;
  const std::size_t bytes = index_.dim() * sizeof(float);
  const auto fetch = [&](std::size_t w) { prefetch_lines(index_.vector(s.words[w]), bytes); };
  for (std::size_t w = 0; w < std::min(kAhead, s.words.size()); ++w) fetch(w);
  for (std::size_t w = 0; w < s.words.size(); ++w) {
    if (w + kAhead < s.words.size()) fetch(w + kAhead);
    float* value = s.value.data() + w * h;
    for (std::size_t t = 0; t < h; ++t)
      if (value[t] == kWanted) value[t] = cache_->exact(s.words[w], j, t);
  }
  // Each document's minima and sum.
  std::size_t e = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    s.best.assign(h, kInf);
    for (; e < s.ends[i]; ++e) {
      const std::uint32_t at = s.wanted[e];
      s.best[at % h] = std::min(s.best[at % h], s.value[at]);
    }
    out[i] = weighted_root_sum(j, s.best.data());
  }
}

float QueryToDocument::finish(std::size_t j, std::size_t doc, float* root) const {
  const std::uint64_t c0 = batch_.cols_indptr[j], h = batch_.cols_indptr[j + 1] - c0;
  const auto words = index_.doc_words(doc);
  thread_local std::vector<float> sq;
  thread_local std::vector<std::uint32_t> unknown;
  unknown.clear();
  for (std::size_t t = 0; t < h; ++t)
    if (!(root[t] < kInf)) unknown.push_back(static_cast<std::uint32_t>(t));
  if (!unknown.empty()) {
    sq.assign(h, kInf);
    within_reach(*cache_, words, j, c0, h, unknown, [&](std::uint32_t u, std::size_t t) {
      sq[t] = std::min(sq[t], cache_->exact(u, j, t));
    });
    for (const std::uint32_t t : unknown) root[t] = std::sqrt(sq[t]);
  }
  return weighted_sum(j, root);
}

float QueryToDocument::lower(std::size_t j, std::size_t doc) const {
  thread_local std::vector<float> best;
  best.resize(batch_.cols_indptr[j + 1] - batch_.cols_indptr[j]);
  cache_min(doc, 1, batch_.cols_indptr[j], best.size(), best.data());
  return weighted_root_sum(j, best.data());
}

void QueryToDocument::every(float* out, bool with_d1) const {
  const std::size_t n = index_.n_docs(), Q = q_.size(), cols = batch_.cols.size();
  constexpr std::size_t kDocs = 64;  // a block's minima stay in the CPU's L2
#pragma omp parallel
  {
    std::vector<float> best(kDocs * cols);
#pragma omp for schedule(static, 16)
    for (std::size_t i0 = 0; i0 < n; i0 += kDocs) {
      const std::size_t nd = std::min(kDocs, n - i0);
      cache_min(i0, nd, 0, cols, best.data());
      for (std::size_t j = 0; j < Q; ++j)
        for (std::size_t d = 0; d < nd; ++d) {
          const float d2 = weighted_root_sum(j, best.data() + d * cols + batch_.cols_indptr[j]);
          float& o = out[j * n + i0 + d];
          o = with_d1 ? std::max(o, d2) : d2;
        }
    }
  }
}

void QueryToDocument::cache_min(std::size_t doc, std::size_t n_docs, std::size_t c0, std::size_t h,
                                float* out) const {
  cpu::kernels().gather_min(cache_->row(0) + c0, cache_->stride(), index_.indptr().data() + doc,
                            index_.indices().data(), n_docs, h, out);
}

float QueryToDocument::weighted_root_sum(std::size_t j, const float* sq) const {
  const float* f = q_.set.weights.data() + q_.set.indptr[q_.begin + j];
  const std::size_t h = q_.set.length(q_.begin + j);
  float s = 0;
  for (std::size_t t = 0; t < h; ++t) s += f[t] * std::sqrt(sq[t]);
  return s;
}

}  // namespace lcrwmd
