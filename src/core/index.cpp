// The index: its file loaded, kept or written through io/index_image.h, and what it answers.
#include "lcrwmd/index.h"

#include <cmath>
#include <utility>

#include "core/index_storage.h"
#include "cpu/distance_kernels.h"
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
  Storage& s = storage_->vocabulary_owner ? *storage_->vocabulary_owner : *storage_;
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

Index Index::load(const std::string& path, bool verify) {
  auto storage = std::make_unique<Storage>();
  storage->name = path;
  storage->file = std::make_unique<MappedFile>(path);
  storage->base = storage->file->data();
  storage->size = storage->file->size();
  return Index(std::move(storage), verify);
}

Index Index::from_data(const IndexData& data) { return in_memory(io::index_image(data)); }

void Index::save(const IndexData& data, const std::string& path) {
  io::write_index_file(data, path);
}

Index Index::from_bytes(std::string bytes) {
  return in_memory(std::vector<char>(bytes.begin(), bytes.end()));
}

Index Index::in_memory(std::vector<char> bytes) {
  auto storage = std::make_unique<Storage>();
  storage->name = "memory";
  storage->bytes = std::move(bytes);
  storage->base = storage->bytes.data();
  storage->size = storage->bytes.size();
  return Index(std::move(storage), true);
}

std::string Index::to_bytes() const {
  if (storage_->shard_indptr.empty()) return {storage_->base, storage_->size};
  const std::vector<char> image = io::index_image(data());  // a shard: its own documents only
  return {image.begin(), image.end()};
}

Index::Index(std::unique_ptr<Storage> storage, bool verify) : storage_(std::move(storage)) {
  const io::IndexView v =
      io::read_index_image(storage_->base, storage_->size, storage_->name, verify);
  n_docs_ = v.n_docs;
  vocab_size_ = v.vocab_size;
  dim_ = v.dim;
  nnz_ = v.nnz;
  weighting_ = v.weighting;
  has_text_ = v.has_text;
  tokenizer_version_ = v.tokenizer_version;
  fingerprint_ = v.embeddings_fingerprint;
  idf_docs_ = v.idf_docs;
  indptr_ = v.indptr;
  indices_ = v.indices;
  values_ = v.values;
  vectors_ = v.vectors;
  sq_norms_ = v.sq_norms;
  doc_freq_ = v.doc_freq;
  storage_->vocab = v.vocab;
  storage_->ids = v.ids;
  storage_->labels = v.labels;
  storage_->texts = v.texts;
  for (std::size_t i = 0; i < v.n_stopwords; ++i) storage_->stopwords.add(v.stopwords[i]);
}

Index::Index(const Index& whole, std::unique_ptr<Storage> storage)
    : storage_(std::move(storage)),
      n_docs_(whole.n_docs_),
      vocab_size_(whole.vocab_size_),
      dim_(whole.dim_),
      nnz_(whole.nnz_),
      weighting_(whole.weighting_),
      has_text_(whole.has_text_),
      tokenizer_version_(whole.tokenizer_version_),
      fingerprint_(whole.fingerprint_),
      idf_docs_(whole.idf_docs_),
      indptr_(whole.indptr_),
      indices_(whole.indices_),
      values_(whole.values_),
      vectors_(whole.vectors_),
      sq_norms_(whole.sq_norms_),
      doc_freq_(whole.doc_freq_) {
  const Storage& from = *whole.storage_;
  storage_->vocab = from.vocab;
  storage_->ids = from.ids;
  storage_->labels = from.labels;
  storage_->texts = from.texts;
  storage_->stopwords = from.stopwords;
}

Index Index::shard(std::size_t begin, std::size_t end) const {
  if (begin > end || end > n_docs_)
    throw Error("shard [" + std::to_string(begin) + ", " + std::to_string(end) +
                ") of an index of " + std::to_string(n_docs_) + " documents");
  auto storage = std::make_unique<Storage>();
  storage->name = storage_->name + " [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
  storage->base = storage_->base;
  storage->size = storage_->size;
  storage->vocabulary_owner =
      storage_->vocabulary_owner ? storage_->vocabulary_owner : storage_.get();
  storage->shard_indptr.resize(end - begin + 1);
  for (std::size_t i = 0; i <= end - begin; ++i)
    storage->shard_indptr[i] = indptr_[begin + i] - indptr_[begin];
  Index ix(*this, std::move(storage));  // this index's views, narrowed to the shard below
  Storage& s = *ix.storage_;
  ix.n_docs_ = end - begin;
  ix.nnz_ = s.shard_indptr.back();
  ix.indptr_ = s.shard_indptr.data();
  ix.indices_ += indptr_[begin];
  ix.values_ += indptr_[begin];
  s.ids.offsets += begin;
  s.labels.offsets += begin;
  s.texts.offsets += begin;
  return ix;
}

const std::string& Index::source() const { return storage_->name; }

const StopWords& Index::stopwords() const { return storage_->stopwords; }

std::size_t Index::text_bytes() const {
  const io::StringTable& t = storage_->texts;
  return has_text_ ? t.offsets[n_docs_] - t.offsets[0] : 0;
}

std::string Index::text(std::size_t i) const {
  if (!has_text_) throw Error(source() + ": the index holds no texts (built with --no-text)");
  if (i >= n_docs_)
    throw Error("document " + std::to_string(i) + " of an index of " + std::to_string(n_docs_));
  std::optional<std::string> text = io::unpack_text(storage_->texts[i]);
  if (!text) throw Error(source() + ": text of document " + std::to_string(i) + " damaged");
  return std::move(*text);
}

IndexData Index::data() const {
  IndexData d;
  d.dim = dim_;
  d.weighting = weighting_;
  d.idf_docs = idf_docs_ == n_docs_ ? 0 : idf_docs_;
  d.indptr.assign(indptr().begin(), indptr().end());
  d.indices.assign(indices().begin(), indices().end());
  d.values.assign(values().begin(), values().end());
  d.vectors.assign(vectors_, vectors_ + vocab_size_ * dim_);
  for (std::size_t u = 0; u < vocab_size_; ++u) {
    d.vocab.emplace_back(word(u));
    d.doc_freq.push_back(doc_freq_[u]);
  }
  for (std::size_t i = 0; i < n_docs_; ++i) {
    d.ids.emplace_back(doc_id(i));
    d.labels.emplace_back(label(i));
    if (has_text_) d.texts.push_back(text(i));
  }
  d.stopwords = stopwords().sorted();
  d.tokenizer_version = tokenizer_version_;
  return d;
}

}  // namespace lcrwmd
