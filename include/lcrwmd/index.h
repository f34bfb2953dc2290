#pragma once
// The resident set: bag-of-words histograms (CSR) over a compacted vocabulary (only the words
// that occur in the set), the vectors of those words, document ids, labels and (compressed)
// texts, and how it was built (tokenizer, stop words, weighting, document frequencies), which
// queries are then read with. Saved as one versioned, checksummed file, memory-mapped on load.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/metric.h"
#include "lcrwmd/text.h"

namespace lcrwmd {

enum class Weighting : std::uint32_t { tf = 0, tfidf = 1 };
const char* to_string(Weighting w);
Weighting parse_weighting(std::string_view s);  // "tf" | "tfidf"

// Smoothed inverse document frequency, finite for words the set never saw (df = 0).
double idf(std::size_t n_docs, std::size_t doc_freq);
// Okapi BM25's (Robertson-Sparck Jones, as Lucene: log(1 + (N - df + 0.5) / (df + 0.5))),
// positive even for a word in every document.
double bm25_idf(std::size_t n_docs, std::size_t doc_freq);

// Everything an index holds, in owned memory: what a builder produces and the file stores.
struct IndexData {
  std::size_t dim = 0;
  Weighting weighting = Weighting::tf;
  std::vector<std::uint64_t> indptr{0};  // n_docs + 1
  std::vector<std::uint32_t> indices;    // compacted word ids, ascending within a document
  std::vector<float> values;             // L1-normalised weights
  std::vector<std::string> vocab;        // compacted vocabulary, in vocabulary_before's order
  std::vector<float> vectors;            // vocab.size() x dim
  std::vector<std::uint32_t> doc_freq;   // documents containing each word, of idf_docs
  std::size_t idf_docs = 0;              // the documents doc_freq counts; 0: these
  std::vector<std::string> ids;
  std::vector<std::string> labels;
  std::vector<std::string> texts;      // each document's text; empty: none kept
  std::vector<std::string> stopwords;  // sorted: what the documents' tokens were filtered by
  std::uint32_t tokenizer_version = kTokenizerVersion;  // what read the documents' text
  // Every vector scaled to length 1 (to_unit_length); queries' vectors are scaled alike.
  bool unit_vectors = false;
  // A learned metric (lcrwmd/metric.h) the vectors and values were built with, applied to
  // queries alike; null: none. `dim` is then its map's rows.
  std::shared_ptr<const Metric> metric;

  // The lexical part (what bm25 reads; absent where `terms` is empty, as in an index assembled
  // by hand): every token the documents kept past the stop words, with a vector or without.
  // Term t is terms[t] (sorted bytewise), in term_doc_freq[t] of the idf_docs documents; its
  // postings, documents ascending, are posting_docs[posting_indptr[t], posting_indptr[t + 1])
  // with how often it occurs in each. A shard (select_documents) keeps the whole build's terms
  // and frequencies, so that every shard answers for every term.
  std::vector<std::string> terms;
  std::vector<std::uint32_t> term_doc_freq;
  std::vector<std::uint64_t> posting_indptr{0};
  std::vector<std::uint32_t> posting_docs;
  std::vector<std::uint32_t> posting_counts;
  std::vector<std::uint32_t> doc_lengths;  // each document's tokens
  std::uint64_t idf_length = 0;            // the idf_docs documents' tokens; 0: these
};

// The order of an index's vocabulary, a rule of the index whatever order its vectors came in:
// the words most documents use first (the rows every search reads most, together), ties
// bytewise. Builds, merges and indexes made from a matrix all follow it.
inline bool vocabulary_before(std::uint32_t df_a, std::string_view a, std::uint32_t df_b,
                              std::string_view b) {
  return df_a != df_b ? df_a > df_b : a < b;
}

// The lexical part of `d` from each document's term counts: document i holds terms
// term_ids[indptr[i], indptr[i + 1]) (indices into `terms`, which need not be sorted, each at
// most once per document) with their counts.
void set_terms(IndexData& d, std::vector<std::string> terms, std::span<const std::uint64_t> indptr,
               std::span<const std::uint32_t> term_ids, std::span<const std::uint32_t> counts);

// What a build (or a query set) saw on its way: counts for the report the CLI prints.
struct TextReport {
  std::size_t documents_read = 0;
  std::size_t documents_kept = 0;
  std::vector<std::string> empty_documents;  // ids of documents left with no word
  std::size_t tokens = 0;
  std::size_t stop_tokens = 0;
  std::size_t unknown_tokens = 0;  // no vector in the index or the embeddings given: dropped
  std::size_t unknown_distinct = 0;
  // Queries read without embeddings: not in the index, so dropped, though the embeddings it
  // was built from may hold them.
  std::size_t not_in_index_tokens = 0;
  std::size_t not_in_index_distinct = 0;
};

struct BuildOptions {
  const StopWords* stopwords = nullptr;
  Weighting weighting = Weighting::tf;
  bool keep_text = true;      // store each document's text (compressed) for display
  bool unit_vectors = false;  // scale every word vector to length 1 (IndexData::unit_vectors)
  // Applied to every vector and weight (lcrwmd/metric.h); its vectors must be the embeddings'
  // (Metric::check_vectors) and its unit_vectors this build's. Null: none.
  std::shared_ptr<const Metric> metric;
};

// BuildOptions::unit_vectors where none is asked for: as the metric was learned, where one is
// given; else on for a fastText model (what `lcrwmd vectors train` and `build --train-vectors`
// make, which search better at length 1), off for a table of vectors. Every front end's default.
bool unit_vectors_by_default(const WordVectors& vectors, const Metric* metric);

IndexData build_index_data(const Embeddings& embeddings, const std::vector<RawDocument>& docs,
                           const BuildOptions& options, TextReport* report = nullptr);

// Documents `docs` (in that order) as an index of their own, with its own compacted vocabulary
// (the words they use) and the whole's document frequencies (idf_docs), so that queries are
// weighted and distances computed as against the whole. An index out of range: an Error.
IndexData select_documents(const IndexData& data, std::span<const std::size_t> docs);

// An index's documents in `parts` contiguous, near-equal shards, each with its own compacted
// vocabulary (the words its documents use) and the whole build's document frequencies
// (idf_docs), so that the shards, searched together (lcrwmd/segments.h), weight queries as the
// whole does. Fewer documents than parts: an Error.
std::vector<IndexData> split_index_data(const IndexData& data, std::size_t parts);

class Index;
struct PostingBlocks;
namespace io {
struct StoredBlock;
}

// Documents of several indexes built apart from the same word vectors (TF-weighted), as one
// index: docs[p] of parts[p] (ascending), in that order. What build_index_data gives for those
// documents' text, byte for byte: the vocabulary the words they use (vocabulary_before's order,
// with the parts' vectors), document frequencies and terms counted over them. An Error for TF-IDF
// parts, parts built otherwise, or a word whose vector differs between parts.
IndexData merge_documents(std::span<const Index* const> parts,
                          std::span<const std::vector<std::size_t>> docs);

class Index {
 public:
  // Memory-maps an index file. verify: check the payload checksum and the CSR structure.
  static Index load(const std::string& path, bool verify = true);
  static Index from_data(const IndexData& data);
  // Writes the index file atomically (temporary file, then rename).
  static void save(const IndexData& data, const std::string& path);
  // An index over an index file's bytes in memory, checked as load() checks a file (for
  // unpickling and receiving); to_bytes() gives them.
  static Index from_bytes(std::string bytes);

  Index(Index&&) noexcept;
  Index& operator=(Index&&) noexcept;
  ~Index();

  std::size_t n_docs() const { return n_docs_; }
  std::size_t vocab_size() const { return vocab_size_; }
  std::size_t dim() const { return dim_; }
  std::size_t nnz() const { return nnz_; }
  Weighting weighting() const { return weighting_; }
  std::size_t file_bytes() const;
  // The file it was loaded from ("memory" for one made from data).
  const std::string& source() const;
  // How it was built; make_query_set reads queries the same way.
  const StopWords& stopwords() const;
  std::uint32_t tokenizer_version() const { return tokenizer_version_; }
  // Whether its vectors were scaled to length 1; queries' vectors then are too.
  bool unit_vectors() const { return unit_vectors_; }
  // The learned metric it was built with (lcrwmd/metric.h), applied to its queries; null: none.
  const Metric* metric() const { return metric_.get(); }
  std::shared_ptr<const Metric> shared_metric() const { return metric_; }
  // The dimension of the word vectors it was built from, and queries are looked up in: its
  // own, or with a metric the metric's input.
  std::size_t input_dim() const;
  // XXH3-64 of the vocabulary and its vectors: which embeddings (restricted to its words) it
  // was built from.
  std::uint64_t embeddings_fingerprint() const { return fingerprint_; }

  // Whether each document's text was kept, what it costs compressed, and document i's text.
  bool has_text() const { return has_text_; }
  std::size_t text_bytes() const;
  std::string text(std::size_t i) const;  // an Error where no text was kept

  std::span<const std::uint64_t> indptr() const { return {indptr_, n_docs_ + 1}; }
  std::span<const std::uint32_t> indices() const { return {indices_, nnz_}; }
  std::span<const float> values() const { return {values_, nnz_}; }
  // Document i's words (indices()'s part of it), ascending.
  std::span<const std::uint32_t> doc_words(std::size_t i) const {
    return {indices_ + indptr_[i], indices_ + indptr_[i + 1]};
  }
  const float* vectors() const { return vectors_; }
  const float* vector(std::size_t word) const { return vectors_ + word * dim_; }
  const float* sq_norms() const { return sq_norms_; }
  std::uint32_t doc_freq(std::size_t word) const { return doc_freq_[word]; }
  // The documents doc_freq counts: this index's, or for a shard, its whole build's.
  std::size_t idf_docs() const { return idf_docs_; }

  // The lexical part (IndexData's terms): whether it has one, its terms, and where each occurs.
  bool has_terms() const { return n_terms_ > 0; }
  std::size_t n_terms() const { return n_terms_; }
  std::string_view term(std::size_t t) const;
  std::optional<std::uint32_t> find_term(std::string_view term) const;  // a binary search
  std::uint32_t term_doc_freq(std::size_t t) const { return term_doc_freq_[t]; }
  // Term t's postings in this index's documents, read through a PostingReader
  // (core/posting_reader.h): posting p says that document doc(p) - first holds the term count(p)
  // times (first: a shard's first document in the file it shares). Stored in compressed blocks
  // (io/posting_codec.h), or as plain arrays by an index file of format 3 or 4.
  struct Postings {
    std::size_t size = 0;
    std::uint32_t first = 0;
    const std::uint32_t* docs = nullptr;  // plain: size of each
    const std::uint32_t* counts = nullptr;
    // Blocks: the list's from the one holding its first posting, their bytes, the postings of
    // that first block before its first (a shard's), and the postings the blocks hold in all.
    const io::StoredBlock* blocks = nullptr;
    const std::uint8_t* bytes = nullptr;
    std::size_t skip = 0;
    std::size_t stored = 0;
  };
  Postings postings(std::size_t t) const;
  // What the postings and the documents' lengths take in its file (a shard's: its whole's).
  std::size_t lexical_bytes() const { return lexical_bytes_; }
  // Term t's postings in blocks with each block's bounds (core/posting_blocks.h): made on the
  // first search that reads the term, then kept with the index.
  const PostingBlocks& posting_blocks(std::size_t t) const;
  std::uint32_t doc_length(std::size_t i) const { return doc_lengths_[i]; }
  const std::uint32_t* doc_lengths() const { return doc_lengths_; }  // n_docs() of them
  // The tokens of the idf_docs documents: with idf_docs, their mean length.
  double idf_length() const { return static_cast<double>(idf_length_); }

  std::string_view word(std::size_t i) const;
  std::string_view doc_id(std::size_t i) const;
  std::string_view label(std::size_t i) const;
  std::optional<std::uint32_t> find_word(std::string_view word) const;
  // The first document with this id: a table of its ids built on first use (src/util/id_slots.h:
  // 8 to 16 bytes a document), then a slot or two read per lookup.
  std::optional<std::size_t> find_doc(std::string_view id) const;

  // Everything it holds, in owned memory (what save() writes).
  IndexData data() const;
  // Its index file's bytes: the image it was loaded from (a shard's written afresh).
  std::string to_bytes() const;

  // Weighted word-vector centroids of every document (n_docs x dim), computed on first use.
  const float* centroids() const;

  // The documents holding each vocabulary word, ascending: the word-document matrix read by
  // word (what query-to-document's threshold walk walks), made from indices() on first use and
  // kept (4 bytes per stored word of a document).
  struct WordPostings {
    std::vector<std::uint64_t> indptr;  // vocab_size + 1
    std::vector<std::uint32_t> docs;
    std::span<const std::uint32_t> of(std::size_t word) const {
      return {docs.data() + indptr[word], docs.data() + indptr[word + 1]};
    }
  };
  const WordPostings& word_postings() const;

  // Documents [begin, end) as an index of their own (document i of the shard is begin + i
  // here), sharing this index's memory, which must outlive the shard: the same vocabulary,
  // vectors and document frequencies, so queries are weighted and distances computed exactly
  // as against the whole (what each rank of a distributed search holds).
  Index shard(std::size_t begin, std::size_t end) const;

 private:
  struct Storage;
  // Reads the views of storage's image (checked; verify: its checksum too).
  Index(std::unique_ptr<Storage> storage, bool verify);
  // The views of `whole`, checked when it was made, over storage (which shares its image).
  Index(const Index& whole, std::unique_ptr<Storage> storage);
  static Index in_memory(std::vector<char> image);

  std::unique_ptr<Storage> storage_;
  std::size_t n_docs_ = 0, vocab_size_ = 0, dim_ = 0, nnz_ = 0;
  Weighting weighting_ = Weighting::tf;
  bool has_text_ = false;
  bool unit_vectors_ = false;
  std::shared_ptr<const Metric> metric_;
  std::uint32_t tokenizer_version_ = 0;
  std::uint64_t fingerprint_ = 0;
  std::size_t idf_docs_ = 0;
  std::size_t n_terms_ = 0;
  std::uint64_t idf_length_ = 0;
  std::size_t first_doc_ = 0;  // a shard's first document in its file
  bool is_shard_ = false;
  const std::uint64_t* indptr_ = nullptr;
  const std::uint32_t* indices_ = nullptr;
  const float* values_ = nullptr;
  const float* vectors_ = nullptr;
  const float* sq_norms_ = nullptr;
  const std::uint32_t* doc_freq_ = nullptr;
  const std::uint32_t* term_doc_freq_ = nullptr;
  const std::uint64_t* posting_indptr_ = nullptr;
  const std::uint64_t* posting_block_indptr_ = nullptr;  // compressed postings
  const io::StoredBlock* posting_blocks_ = nullptr;
  const std::uint8_t* posting_bytes_ = nullptr;
  const std::uint32_t* posting_docs_ = nullptr;  // plain postings
  const std::uint32_t* posting_counts_ = nullptr;
  const std::uint32_t* doc_lengths_ = nullptr;
  std::size_t lexical_bytes_ = 0;
};

}  // namespace lcrwmd
