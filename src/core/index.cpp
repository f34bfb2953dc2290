// The index: its file loaded, kept or written through io/index_image.h, and what it answers.
#include "lcrwmd/index.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/index_storage.h"
#include "core/posting_reader.h"
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

double bm25_idf(std::size_t n_docs, std::size_t doc_freq) {
  const double n = static_cast<double>(n_docs), df = static_cast<double>(doc_freq);
  return std::log1p((n - df + 0.5) / (df + 0.5));
}

Index::Index(Index&&) noexcept = default;
Index& Index::operator=(Index&&) noexcept = default;
Index::~Index() = default;

std::size_t Index::file_bytes() const { return storage_->size; }

std::size_t Index::input_dim() const { return metric_ ? metric_->in_dim() : dim_; }
std::string_view Index::word(std::size_t i) const { return storage_->vocab[i]; }
std::string_view Index::doc_id(std::size_t i) const { return storage_->ids[i]; }
std::string_view Index::label(std::size_t i) const { return storage_->labels[i]; }

std::string_view Index::term(std::size_t t) const { return storage_->terms[t]; }

std::optional<std::uint32_t> Index::find_term(std::string_view term) const {
  std::size_t lo = 0, hi = n_terms_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (storage_->terms[mid] < term)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < n_terms_ && storage_->terms[lo] == term) return static_cast<std::uint32_t>(lo);
  return std::nullopt;
}

Index::Postings Index::postings(std::size_t t) const {
  Postings p;
  p.first = static_cast<std::uint32_t>(first_doc_);
  const std::uint64_t begin = posting_indptr_[t], end = posting_indptr_[t + 1];
  if (!posting_blocks_) {
    p.docs = posting_docs_ + begin;
    p.counts = posting_counts_ + begin;
    p.size = end - begin;
  } else {
    p.blocks = posting_blocks_ + posting_block_indptr_[t];
    p.bytes = posting_bytes_;
    p.size = p.stored = end - begin;
  }
  if (!is_shard_) return p;
  // A shard's: its documents' run of the whole's postings, from the first at or past its
  // first document to the first at or past its end.
  PostingReader whole(p);
  const std::size_t from = whole.seek(0, p.first);
  const std::size_t to = whole.seek(from, static_cast<std::uint32_t>(first_doc_ + n_docs_));
  p.size = to - from;
  if (!p.blocks) {
    p.docs += from;
    p.counts += from;
  } else {
    p.blocks += from / io::kStoredBlock;
    p.skip = from % io::kStoredBlock;
    p.stored -= from - p.skip;
  }
  return p;
}

std::optional<std::size_t> Index::find_doc(std::string_view id) const {
  Storage& s = *storage_;
  const auto id_of = [&s](std::size_t i) { return s.ids[i]; };
  std::call_once(s.id_slots_once, [&] { s.id_slots = IdSlots(n_docs_, id_of); });
  return s.id_slots.find(id, id_of);
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

const PostingBlocks& Index::posting_blocks(std::size_t t) const {
  Storage& s = *storage_;
  const auto term = static_cast<std::uint32_t>(t);
  {
    const std::shared_lock lock(s.blocks_mutex);
    if (const auto it = s.blocks.find(term); it != s.blocks.end()) return *it->second;
  }
  auto made = std::make_unique<const PostingBlocks>(make_posting_blocks(*this, postings(t)));
  const std::unique_lock lock(s.blocks_mutex);
  return *s.blocks.try_emplace(term, std::move(made)).first->second;
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

const Index::WordPostings& Index::word_postings() const {
  Storage& s = *storage_;
  std::call_once(s.word_postings_once, [&] {
    WordPostings& w = s.word_postings;
    w.indptr.assign(vocab_size_ + 1, 0);
    for (std::size_t p = 0; p < nnz_; ++p) ++w.indptr[indices_[p] + 1];
    for (std::size_t u = 0; u < vocab_size_; ++u) w.indptr[u + 1] += w.indptr[u];
    w.docs.resize(nnz_);
    std::vector<std::uint64_t> next(w.indptr.begin(), w.indptr.end() - 1);
    for (std::size_t i = 0; i < n_docs_; ++i)
      for (std::uint64_t p = indptr_[i]; p < indptr_[i + 1]; ++p)
        w.docs[next[indices_[p]]++] = static_cast<std::uint32_t>(i);
  });
  return s.word_postings;
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
  unit_vectors_ = v.unit_vectors;
  tokenizer_version_ = v.tokenizer_version;
  fingerprint_ = v.embeddings_fingerprint;
  idf_docs_ = v.idf_docs;
  indptr_ = v.indptr;
  indices_ = v.indices;
  values_ = v.values;
  vectors_ = v.vectors;
  sq_norms_ = v.sq_norms;
  doc_freq_ = v.doc_freq;
  n_terms_ = v.n_terms;
  idf_length_ = v.idf_length;
  term_doc_freq_ = v.term_doc_freq;
  posting_indptr_ = v.posting_indptr;
  posting_block_indptr_ = v.posting_block_indptr;
  posting_blocks_ = v.posting_blocks;
  posting_bytes_ = v.posting_bytes;
  posting_docs_ = v.posting_docs;
  posting_counts_ = v.posting_counts;
  doc_lengths_ = v.doc_lengths;
  lexical_bytes_ = v.lexical_bytes;
  storage_->terms = v.terms;
  storage_->vocab = v.vocab;
  storage_->ids = v.ids;
  storage_->labels = v.labels;
  storage_->texts = v.texts;
  for (std::size_t i = 0; i < v.n_stopwords; ++i) storage_->stopwords.add(v.stopwords[i]);
  if (!v.metric.empty()) {
    metric_ = std::make_shared<const Metric>(Metric::from_bytes(v.metric, storage_->name));
    if (metric_->out_dim() != dim_ || metric_->unit_vectors() != unit_vectors_)
      throw Error(
          storage_->name + ": not a valid lcrwmd index: its metric maps to dimension " +
          std::to_string(metric_->out_dim()) + ", its vectors have " + std::to_string(dim_) +
          (metric_->unit_vectors() != unit_vectors_ ? ", and they disagree on unit-length vectors"
                                                    : ""));
  }
}

Index::Index(const Index& whole, std::unique_ptr<Storage> storage)
    : storage_(std::move(storage)),
      n_docs_(whole.n_docs_),
      vocab_size_(whole.vocab_size_),
      dim_(whole.dim_),
      nnz_(whole.nnz_),
      weighting_(whole.weighting_),
      has_text_(whole.has_text_),
      unit_vectors_(whole.unit_vectors_),
      metric_(whole.metric_),
      tokenizer_version_(whole.tokenizer_version_),
      fingerprint_(whole.fingerprint_),
      idf_docs_(whole.idf_docs_),
      indptr_(whole.indptr_),
      indices_(whole.indices_),
      values_(whole.values_),
      vectors_(whole.vectors_),
      sq_norms_(whole.sq_norms_),
      doc_freq_(whole.doc_freq_),
      term_doc_freq_(whole.term_doc_freq_),
      posting_indptr_(whole.posting_indptr_),
      posting_block_indptr_(whole.posting_block_indptr_),
      posting_blocks_(whole.posting_blocks_),
      posting_bytes_(whole.posting_bytes_),
      posting_docs_(whole.posting_docs_),
      posting_counts_(whole.posting_counts_),
      doc_lengths_(whole.doc_lengths_),
      lexical_bytes_(whole.lexical_bytes_) {
  n_terms_ = whole.n_terms_;
  idf_length_ = whole.idf_length_;
  first_doc_ = whole.first_doc_;
  is_shard_ = whole.is_shard_;
  const Storage& from = *whole.storage_;
  storage_->terms = from.terms;
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
  ix.first_doc_ += begin;
  ix.is_shard_ = true;
  if (ix.doc_lengths_) ix.doc_lengths_ += begin;
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
  d.unit_vectors = unit_vectors_;
  d.metric = metric_;
  if (!has_terms()) return d;
  d.idf_length = idf_docs_ == n_docs_ ? 0 : idf_length_;
  d.doc_lengths.assign(doc_lengths_, doc_lengths_ + n_docs_);
  for (std::size_t t = 0; t < n_terms_; ++t) {
    d.terms.emplace_back(term(t));
    d.term_doc_freq.push_back(term_doc_freq_[t]);
    PostingReader p(postings(t));
    for (std::size_t e = 0; e < p.size(); ++e) {
      d.posting_docs.push_back(p.doc(e) - p.first());
      d.posting_counts.push_back(p.count(e));
    }
    d.posting_indptr.push_back(d.posting_docs.size());
  }
  return d;
}

}  // namespace lcrwmd
