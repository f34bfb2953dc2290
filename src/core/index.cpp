#include "lcrwmd/index.h"

#include <cmath>

#include "cpu/distance_kernels.h"
#include "io/index_storage.h"
#include "lcrwmd/error.h"

namespace lcrwmd {

const char* to_string(Weighting w) { return w == Weighting::tfidf ? "tfidf" : "tf"; }

Weighting parse_weighting(std::string_view s) {
  if (s == "tf") return Weighting::tf;
  if (s == "tfidf") return Weighting::tfidf;
  throw Error("unknown weighting '" + std::string(s) + "' (expected tf or tfidf)");
}

double idf(std::size_t n_docs, std::size_t doc_freq) {
  return std::log((1.0 + static_cast<double>(n_docs)) / (1.0 + static_cast<double>(doc_freq))) +
         1.0;
}

Index::Index(std::unique_ptr<Storage> storage) : storage_(std::move(storage)) { bind(); }
Index::Index(Index&&) noexcept = default;
Index& Index::operator=(Index&&) noexcept = default;
Index::~Index() = default;

std::size_t Index::file_bytes() const { return storage_->size; }
std::string_view Index::word(std::size_t i) const { return storage_->vocab[i]; }
std::string_view Index::doc_id(std::size_t i) const { return storage_->ids[i]; }
std::string_view Index::label(std::size_t i) const { return storage_->labels[i]; }

std::optional<std::size_t> Index::find_doc(std::string_view id) const {
  for (std::size_t i = 0; i < n_docs(); ++i)
    if (doc_id(i) == id) return i;
  return std::nullopt;
}

std::optional<std::uint32_t> Index::find_word(std::string_view w) const {
  Storage& s = *storage_;
  std::call_once(s.word_map_once, [&] {
    s.word_map.reserve(vocab_size_);
    for (std::size_t u = 0; u < vocab_size_; ++u)
      s.word_map.emplace(std::string(s.vocab[u]), static_cast<std::uint32_t>(u));
  });
  auto it = s.word_map.find(w);
  if (it == s.word_map.end()) return std::nullopt;
  return it->second;
}

const float* Index::centroids() const {
  Storage& s = *storage_;
  std::call_once(s.centroids_once, [&] {
    s.centroids.resize(n_docs_ * dim_);
#pragma omp parallel
    {
      std::vector<double> acc(dim_);
#pragma omp for schedule(dynamic, 256)
      for (std::size_t i = 0; i < n_docs_; ++i) {
        const std::size_t b = indptr_[i], h = indptr_[i + 1] - b;
        cpu::weighted_centroid(
            indices_ + b, values_ + b, h, [&](std::uint32_t u) { return vector(u); }, dim_,
            acc.data(), s.centroids.data() + i * dim_);
      }
    }
  });
  return s.centroids.data();
}

}  // namespace lcrwmd
