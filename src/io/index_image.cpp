// An index file's image (layout in index_format.h): written from IndexData, and checked and
// read as typed views where it lies in memory.
#include "io/index_image.h"

#include <xxhash.h>
#include <zlib.h>

#include <cstddef>
#include <cstring>

#include "cpu/distance_kernels.h"
#include "io/index_format.h"
#include "io/posting_codec.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "util/parallel_errors.h"

namespace lcrwmd::io {
namespace {

using format::FileHeader;
using format::Section;

// Byte sinks for serialize(): a file being written atomically, or memory.
struct Sink {
  virtual ~Sink() = default;
  virtual void write(const void* data, std::size_t bytes) = 0;
  virtual void write_header(const FileHeader& h) = 0;
};

struct FileSink final : Sink {
  explicit FileSink(AtomicFile& f) : file(f) {}
  void write(const void* data, std::size_t bytes) override { file.write(data, bytes); }
  void write_header(const FileHeader& h) override { file.write_at(0, &h, sizeof h); }
  AtomicFile& file;
};

struct MemorySink final : Sink {
  void write(const void* data, std::size_t bytes) override {
    const char* p = static_cast<const char*>(data);
    bytes_.insert(bytes_.end(), p, p + bytes);
  }
  void write_header(const FileHeader& h) override { std::memcpy(bytes_.data(), &h, sizeof h); }
  std::vector<char> bytes_;
};

class Serializer {
 public:
  explicit Serializer(Sink& sink) : sink_(sink), state_(XXH3_createState()) {
    XXH3_64bits_reset(state_);
    std::memset(&header_, 0, sizeof header_);
    sink_.write(&header_, sizeof header_);  // placeholder, patched by finish()
    pos_ = sizeof header_;
  }
  ~Serializer() { XXH3_freeState(state_); }
  Serializer(const Serializer&) = delete;
  Serializer& operator=(const Serializer&) = delete;

  template <typename T>
  void section(Section s, const T* data, std::size_t count) {
    align();
    header_.sections[s] = {pos_, count * sizeof(T)};
    emit(data, count * sizeof(T));
  }

  // The metric's bytes, after every section.
  void metric(const std::string& bytes) {
    align();
    header_.metric_bytes = bytes.size();
    emit(bytes.data(), bytes.size());
  }

  // Offsets + bytes of a list of strings (count of them: offsets of `count` empty ones).
  void strings(Section offsets_section, Section bytes_section,
               const std::vector<std::string>& items, std::size_t count) {
    std::vector<std::uint64_t> offsets(count + 1, 0);
    std::string bytes;
    for (std::size_t i = 0; i < items.size(); ++i) {
      bytes += items[i];
      offsets[i + 1] = bytes.size();
    }
    section(offsets_section, offsets.data(), offsets.size());
    section(bytes_section, bytes.data(), bytes.size());
  }

  FileHeader& header() { return header_; }

  void finish(std::uint32_t version) {
    std::memcpy(header_.magic, format::kMagic, sizeof header_.magic);
    header_.version = version;
    header_.header_bytes = sizeof(FileHeader);
    header_.n_sections = format::kSectionCount;
    header_.file_bytes = pos_;
    header_.payload_hash = XXH3_64bits_digest(state_);
    header_.header_hash = XXH3_64bits(&header_, offsetof(FileHeader, header_hash));
    sink_.write_header(header_);
  }

 private:
  void align() {
    static const char zeros[format::kAlign] = {};
    emit(zeros, (format::kAlign - pos_ % format::kAlign) % format::kAlign);
  }
  void emit(const void* data, std::size_t bytes) {
    if (bytes == 0) return;
    sink_.write(data, bytes);
    XXH3_64bits_update(state_, data, bytes);
    pos_ += bytes;
  }

  Sink& sink_;
  XXH3_state_t* state_;
  FileHeader header_;
  std::uint64_t pos_ = 0;
};

void check_data(const IndexData& d) {
  const std::size_t n = d.ids.size();
  const std::size_t v = d.vocab.size();
  if (d.dim == 0) throw Error("index: dimension must be positive");
  check_tokenizer_version(d.tokenizer_version);
  if (d.indptr.size() != n + 1 || d.labels.size() != n || d.indptr.front() != 0 ||
      d.indptr.back() != d.indices.size() || d.values.size() != d.indices.size() ||
      d.vectors.size() != v * d.dim || d.doc_freq.size() != v ||
      (!d.texts.empty() && d.texts.size() != n) || (d.idf_docs != 0 && d.idf_docs < n))
    throw Error("index: inconsistent index data");
  const std::size_t t = d.terms.size();
  if (t == 0
          ? d.posting_indptr.size() > 1 || !d.posting_docs.empty() || !d.doc_lengths.empty()
          : d.term_doc_freq.size() != t || d.posting_indptr.size() != t + 1 ||
                d.posting_indptr.front() != 0 || d.posting_indptr.back() != d.posting_docs.size() ||
                d.posting_counts.size() != d.posting_docs.size() || d.doc_lengths.size() != n)
    throw Error("index: inconsistent terms");
  if (d.metric && (d.metric->out_dim() != d.dim || d.metric->unit_vectors() != d.unit_vectors))
    throw Error("index: its metric disagrees with its vectors");
}

// A document's text as stored: its length (u32), then zlib's deflate of it.
std::string compress_text(const std::string& text) {
  if (text.size() > UINT32_MAX) throw Error("index: a document's text is over 4 GiB");
  const auto n = static_cast<std::uint32_t>(text.size());
  uLongf packed = compressBound(n);
  std::string out(sizeof n + packed, '\0');
  std::memcpy(out.data(), &n, sizeof n);
  if (compress2(reinterpret_cast<Bytef*>(out.data() + sizeof n), &packed,
                reinterpret_cast<const Bytef*>(text.data()), n, Z_DEFAULT_COMPRESSION) != Z_OK)
    throw Error("index: cannot compress a document's text");
  out.resize(sizeof n + packed);
  return out;
}

std::uint64_t fingerprint(const IndexData& d) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (const std::string& w : d.vocab) XXH3_64bits_update(st, w.data(), w.size() + 1);  // + NUL
  XXH3_64bits_update(st, d.vectors.data(), d.vectors.size() * sizeof(float));
  const std::uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

// The postings' three sections: version 5's blocks (io/posting_codec.h), or 4's raw arrays.
void write_postings(const IndexData& d, std::uint32_t version, Serializer& s) {
  if (version == 4 || d.terms.empty()) {
    s.section(format::kPostingIndptr, d.posting_indptr.data(),
              d.terms.empty() ? 0 : d.posting_indptr.size());
    s.section(format::kPostingBlocks, d.posting_docs.data(), d.posting_docs.size());
    s.section(format::kPostingBytes, d.posting_counts.data(), d.posting_counts.size());
    return;
  }
  const std::size_t t = d.terms.size();
  std::vector<std::uint64_t> indptr(d.posting_indptr);  // then each term's first block
  std::vector<StoredBlock> blocks;
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < t; ++i) {
    indptr.push_back(blocks.size());
    const std::uint64_t a = d.posting_indptr[i], b = d.posting_indptr[i + 1];
    encode_postings(d.posting_docs.data() + a, d.posting_counts.data() + a, b - a, blocks, bytes);
  }
  indptr.push_back(blocks.size());
  bytes.resize(bytes.size() + kStoredPadding, 0);
  s.section(format::kPostingIndptr, indptr.data(), indptr.size());
  s.section(format::kPostingBlocks, blocks.data(), blocks.size());
  s.section(format::kPostingBytes, bytes.data(), bytes.size());
}

void serialize(const IndexData& d, std::uint32_t version, Sink& sink) {
  if (version != 4 && version != format::kVersion)
    throw Error("index: cannot write format version " + std::to_string(version));
  check_data(d);
  const std::size_t v = d.vocab.size();
  std::vector<float> sq_norms(v);
  for (std::size_t u = 0; u < v; ++u)
    sq_norms[u] = cpu::sq_norm(d.vectors.data() + u * d.dim, d.dim);

  Serializer s(sink);
  FileHeader& h = s.header();
  h.n_docs = d.ids.size();
  h.vocab_size = v;
  h.dim = d.dim;
  h.nnz = d.indices.size();
  h.weighting = static_cast<std::uint32_t>(d.weighting);
  h.tokenizer_version = d.tokenizer_version;
  h.flags = (d.texts.empty() ? 0 : format::kHasText) | (d.terms.empty() ? 0 : format::kHasTerms) |
            (d.unit_vectors ? format::kUnitVectors : 0);
  h.n_stopwords = d.stopwords.size();
  h.embeddings_fingerprint = fingerprint(d);
  h.idf_docs = d.idf_docs;
  h.idf_length = d.idf_length;
  h.n_terms = d.terms.size();
  h.n_postings = d.posting_docs.size();
  s.section(format::kIndptr, d.indptr.data(), d.indptr.size());
  s.section(format::kIndices, d.indices.data(), d.indices.size());
  s.section(format::kValues, d.values.data(), d.values.size());
  s.section(format::kVectors, d.vectors.data(), d.vectors.size());
  s.section(format::kSqNorms, sq_norms.data(), sq_norms.size());
  s.section(format::kDocFreq, d.doc_freq.data(), d.doc_freq.size());
  s.strings(format::kVocabOffsets, format::kVocabBytes, d.vocab, v);
  s.strings(format::kIdOffsets, format::kIdBytes, d.ids, d.ids.size());
  s.strings(format::kLabelOffsets, format::kLabelBytes, d.labels, d.ids.size());
  s.strings(format::kStopOffsets, format::kStopBytes, d.stopwords, d.stopwords.size());
  // Deflated in parallel (most of a large segment's writing), each text on its own: the same
  // bytes on any number of threads.
  std::vector<std::string> packed(d.texts.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t i = 0; i < packed.size(); ++i)
    errors.run([&] { packed[i] = compress_text(d.texts[i]); });
  errors.rethrow();
  s.strings(format::kTextOffsets, format::kTextBytes, packed, d.ids.size());
  s.strings(format::kTermOffsets, format::kTermBytes, d.terms, d.terms.size());
  s.section(format::kTermDocFreq, d.term_doc_freq.data(), d.term_doc_freq.size());
  write_postings(d, version, s);
  s.section(format::kDocLengths, d.doc_lengths.data(), d.doc_lengths.size());
  if (d.metric) s.metric(d.metric->to_bytes());
  s.finish(version);
}

// The lexical part: postings that stay within the documents, ascending within each term, each
// count positive and within its document's length; terms sorted (verify: every posting read;
// version 5's block tables, whose reading depends on them, always).
template <typename Bad>
void check_terms(const char* base, const FileHeader& h, bool verify, const Bad& bad) {
  auto at = [&](Section s) { return base + h.sections[s].offset; };
  const auto* indptr = reinterpret_cast<const std::uint64_t*>(at(format::kPostingIndptr));
  const std::uint64_t t = h.n_terms;
  if (indptr[0] != 0 || indptr[t] != h.n_postings) throw bad("term postings inconsistent");
  for (std::uint64_t i = 0; i < t; ++i)
    if (indptr[i + 1] < indptr[i]) throw bad("term postings inconsistent");
  const auto* lengths = reinterpret_cast<const std::uint32_t*>(at(format::kDocLengths));
  const auto bad_term = [&](std::uint64_t i) {
    return bad("postings of term " + std::to_string(i) + " out of range or unsorted");
  };
  // Version 5: each term's blocks as many as its postings need, their documents ascending from
  // block to block and within the documents, their bytes in order within the section.
  const auto* blocks = reinterpret_cast<const StoredBlock*>(at(format::kPostingBlocks));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(at(format::kPostingBytes));
  const std::uint64_t* block_indptr = indptr + t + 1;
  const std::uint64_t n_bytes = h.sections[format::kPostingBytes].bytes;
  const bool packed = h.version >= 5;
  if (packed) {
    if (block_indptr[0] != 0 ||
        block_indptr[t] * sizeof(StoredBlock) != h.sections[format::kPostingBlocks].bytes ||
        n_bytes < kStoredPadding)
      throw bad("term posting blocks inconsistent");
    const std::uint64_t data_end = n_bytes - kStoredPadding;
    for (std::uint64_t i = 0; i < t; ++i) {
      if (block_indptr[i + 1] < block_indptr[i] ||
          block_indptr[i + 1] - block_indptr[i] != stored_blocks(indptr[i + 1] - indptr[i]))
        throw bad("term posting blocks inconsistent");
      for (std::uint64_t b = block_indptr[i]; b < block_indptr[i + 1]; ++b) {
        const StoredBlock& k = blocks[b];
        if (k.first > k.last || k.last >= h.n_docs || k.offset > data_end ||
            (b > 0 && k.offset < blocks[b - 1].offset) ||
            (b > block_indptr[i] && k.first <= blocks[b - 1].last))
          throw bad_term(i);
      }
    }
  }
  if (!verify) return;
  const io::StringTable terms{reinterpret_cast<const std::uint64_t*>(at(format::kTermOffsets)),
                              at(format::kTermBytes)};
  const auto check_list = [&](std::uint64_t i, const std::uint32_t* docs,
                              const std::uint32_t* counts, std::size_t n) {
    for (std::size_t p = 0; p < n; ++p)
      if (docs[p] >= h.n_docs || (p > 0 && docs[p] <= docs[p - 1]) || counts[p] == 0 ||
          counts[p] > lengths[docs[p]])
        throw bad_term(i);
  };
  // Versions 3 and 4: each posting's document and count in the same two sections.
  const auto* plain_docs = reinterpret_cast<const std::uint32_t*>(at(format::kPostingBlocks));
  const auto* plain_counts = reinterpret_cast<const std::uint32_t*>(at(format::kPostingBytes));
  std::uint32_t docs[kStoredBlock], counts[kStoredBlock];
  for (std::uint64_t i = 0; i < t; ++i) {
    if (i > 0 && !(terms[i - 1] < terms[i])) throw bad("terms unsorted or repeated");
    const std::uint64_t n = indptr[i + 1] - indptr[i];
    if (!packed) {
      check_list(i, plain_docs + indptr[i], plain_counts + indptr[i], n);
      continue;
    }
    for (std::uint64_t b = block_indptr[i]; b < block_indptr[i + 1]; ++b) {
      const std::size_t m =
          std::min<std::uint64_t>(kStoredBlock, n - (b - block_indptr[i]) * kStoredBlock);
      const StoredBlock& k = blocks[b];
      const std::uint64_t end =
          b + 1 < block_indptr[t] ? blocks[b + 1].offset : n_bytes - kStoredPadding;
      if (k.offset + decode_block(k, bytes, m, docs, counts) > end || docs[0] != k.first ||
          docs[m - 1] != k.last)
        throw bad_term(i);
      check_list(i, docs, counts, m);
    }
  }
}

// Validates an image; returns its header (a version 3 one as version 4's, without a metric).
// Throws Error naming `name`.
FileHeader check_image(const char* base, std::size_t size, const std::string& name, bool verify) {
  auto bad = [&](const std::string& why) {
    return Error(name + ": not a valid lcrwmd index: " + why);
  };
  if (size < sizeof(FileHeader)) throw bad("file too small");
  FileHeader h;
  std::memcpy(&h, base, sizeof h);
  if (std::memcmp(h.magic, format::kMagic, sizeof h.magic) != 0) throw bad("wrong magic bytes");
  if (h.version == 3) {
    format::FileHeaderV3Tail tail;
    std::memcpy(&tail, base + format::kV3TailOffset, sizeof tail);
    h.metric_bytes = 0;
    h.payload_hash = tail.payload_hash;
    h.header_hash = tail.header_hash;
  }
  if (h.version < format::kOldestVersion)
    throw bad("format version " + std::to_string(h.version) +
              ", written by an older lcrwmd (without the term counts bm25 reads): rebuild it "
              "with `lcrwmd build` (`lcrwmd synth` for a synthetic one; this build reads "
              "version " +
              std::to_string(format::kOldestVersion) + " and later)");
  if (h.version > format::kVersion)
    throw bad("format version " + std::to_string(h.version) + ", newer than this build reads (" +
              std::to_string(format::kVersion) + "): use a newer lcrwmd");
  const std::size_t hashed =
      h.version == 3 ? format::kV3TailOffset : offsetof(FileHeader, header_hash);
  if (h.header_hash != XXH3_64bits(base, hashed))
    throw bad("header checksum mismatch (corrupted file)");
  if (h.file_bytes != size)
    throw bad("file is " + std::to_string(size) + " bytes, header says " +
              std::to_string(h.file_bytes) + " (truncated?)");
  if (h.n_sections != format::kSectionCount || h.weighting > 1 || h.dim == 0 ||
      (h.flags & ~(format::kHasText | format::kHasTerms | format::kUnitVectors)) != 0 ||
      ((h.flags & format::kHasTerms) != 0) != (h.n_terms > 0))
    throw bad("unsupported header fields");
  if (h.idf_docs != 0 && h.idf_docs < h.n_docs)
    throw bad("document frequencies over " + std::to_string(h.idf_docs) +
              " documents, fewer than its " + std::to_string(h.n_docs));
  try {
    check_tokenizer_version(h.tokenizer_version);
  } catch (const Error& e) {
    throw bad(std::string("tokenized with ") + e.what());
  }
  const std::uint64_t n = h.n_docs, v = h.vocab_size, m = h.dim, nnz = h.nnz, st = h.n_stopwords;
  const std::uint64_t t = h.n_terms, np = h.n_postings;
  const bool terms = t > 0;
  const bool packed = h.version >= 5;  // postings in blocks (io/posting_codec.h)
  const std::uint64_t expected[format::kSectionCount] = {(n + 1) * 8,
                                                         nnz * 4,
                                                         nnz * 4,
                                                         v * m * 4,
                                                         v * 4,
                                                         v * 4,
                                                         (v + 1) * 8,
                                                         0,
                                                         (n + 1) * 8,
                                                         0,
                                                         (n + 1) * 8,
                                                         0,
                                                         (st + 1) * 8,
                                                         0,
                                                         (n + 1) * 8,
                                                         0,
                                                         (t + 1) * 8,
                                                         0,
                                                         t * 4,
                                                         terms ? (t + 1) * 8 * (packed ? 2 : 1) : 0,
                                                         packed ? 0 : np * 4,
                                                         packed ? 0 : np * 4,
                                                         terms ? n * 4 : 0};
  // The metric lies after every section.
  if (h.metric_bytes > size - sizeof(FileHeader) ||
      (h.metric_bytes > 0 && (size - h.metric_bytes) % format::kAlign != 0))
    throw bad("metric out of bounds");
  const std::uint64_t sections_end = size - h.metric_bytes;
  for (std::uint32_t s = 0; s < format::kSectionCount; ++s) {
    const auto& sec = h.sections[s];
    const bool is_bytes =
        s == format::kVocabBytes || s == format::kIdBytes || s == format::kLabelBytes ||
        s == format::kStopBytes || s == format::kTextBytes || s == format::kTermBytes ||
        (packed && terms && (s == format::kPostingBlocks || s == format::kPostingBytes));
    if (sec.offset % 8 != 0 || sec.offset < sizeof(FileHeader) || sec.offset > sections_end ||
        sec.bytes > sections_end - sec.offset || (!is_bytes && sec.bytes != expected[s]))
      throw bad("section " + std::to_string(s) + " out of bounds or of the wrong size");
  }
  if (verify) {
    const std::uint64_t hash = XXH3_64bits(base + sizeof(FileHeader), size - sizeof(FileHeader));
    if (hash != h.payload_hash) throw bad("payload checksum mismatch (corrupted file)");
  }
  auto u64s = [&](Section s) {
    return reinterpret_cast<const std::uint64_t*>(base + h.sections[s].offset);
  };
  const std::uint64_t* indptr = u64s(format::kIndptr);
  if (indptr[0] != 0 || indptr[n] != nnz) throw bad("CSR row pointers inconsistent");
  for (std::uint64_t i = 0; i < n; ++i)
    if (indptr[i + 1] <= indptr[i]) throw bad("document " + std::to_string(i) + " has no word");
  const std::pair<Section, std::uint64_t> string_tables[] = {
      {format::kVocabOffsets, v}, {format::kIdOffsets, n},   {format::kLabelOffsets, n},
      {format::kStopOffsets, st}, {format::kTextOffsets, n}, {format::kTermOffsets, t}};
  for (const auto& [s, count] : string_tables) {
    const std::uint64_t* off = u64s(s);
    if (off[0] != 0 || off[count] != h.sections[s + 1].bytes) throw bad("string table broken");
    for (std::uint64_t i = 0; i < count; ++i)
      if (off[i + 1] < off[i]) throw bad("string table broken");
  }
  if (verify) {
    const auto* idx =
        reinterpret_cast<const std::uint32_t*>(base + h.sections[format::kIndices].offset);
    for (std::uint64_t i = 0; i < n; ++i)
      for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p)
        if (idx[p] >= v || (p > indptr[i] && idx[p] <= idx[p - 1]))
          throw bad("word ids of document " + std::to_string(i) + " out of range or unsorted");
  }
  if (terms) check_terms(base, h, verify, bad);
  return h;
}

}  // namespace

std::vector<char> index_image(const IndexData& data, std::uint32_t version) {
  MemorySink sink;
  serialize(data, version, sink);
  return std::move(sink.bytes_);
}

void write_index_file(const IndexData& data, const std::string& path, std::uint32_t version) {
  AtomicFile file(path);
  FileSink sink(file);
  serialize(data, version, sink);
  file.commit();
}

IndexView read_index_image(const char* base, std::size_t size, const std::string& name,
                           bool verify) {
  const FileHeader h = check_image(base, size, name, verify);
  auto at = [&](Section s) { return base + h.sections[s].offset; };
  auto table = [&](Section off, Section bytes) {
    return StringTable{reinterpret_cast<const std::uint64_t*>(at(off)), at(bytes)};
  };
  IndexView v;
  v.n_docs = h.n_docs;
  v.vocab_size = h.vocab_size;
  v.dim = h.dim;
  v.nnz = h.nnz;
  v.weighting = static_cast<Weighting>(h.weighting);
  v.has_text = (h.flags & format::kHasText) != 0;
  v.unit_vectors = (h.flags & format::kUnitVectors) != 0;
  v.tokenizer_version = h.tokenizer_version;
  v.embeddings_fingerprint = h.embeddings_fingerprint;
  v.idf_docs = h.idf_docs != 0 ? h.idf_docs : h.n_docs;
  v.indptr = reinterpret_cast<const std::uint64_t*>(at(format::kIndptr));
  v.indices = reinterpret_cast<const std::uint32_t*>(at(format::kIndices));
  v.values = reinterpret_cast<const float*>(at(format::kValues));
  v.vectors = reinterpret_cast<const float*>(at(format::kVectors));
  v.sq_norms = reinterpret_cast<const float*>(at(format::kSqNorms));
  v.doc_freq = reinterpret_cast<const std::uint32_t*>(at(format::kDocFreq));
  v.vocab = table(format::kVocabOffsets, format::kVocabBytes);
  v.ids = table(format::kIdOffsets, format::kIdBytes);
  v.labels = table(format::kLabelOffsets, format::kLabelBytes);
  v.texts = table(format::kTextOffsets, format::kTextBytes);
  v.stopwords = table(format::kStopOffsets, format::kStopBytes);
  v.n_stopwords = h.n_stopwords;
  v.n_terms = h.n_terms;
  v.terms = table(format::kTermOffsets, format::kTermBytes);
  v.term_doc_freq = reinterpret_cast<const std::uint32_t*>(at(format::kTermDocFreq));
  v.posting_indptr = reinterpret_cast<const std::uint64_t*>(at(format::kPostingIndptr));
  if (h.version >= 5) {
    v.posting_block_indptr = v.posting_indptr + v.n_terms + 1;
    v.posting_blocks = reinterpret_cast<const StoredBlock*>(at(format::kPostingBlocks));
    v.posting_bytes = reinterpret_cast<const std::uint8_t*>(at(format::kPostingBytes));
  } else {
    v.posting_docs = reinterpret_cast<const std::uint32_t*>(at(format::kPostingBlocks));
    v.posting_counts = reinterpret_cast<const std::uint32_t*>(at(format::kPostingBytes));
  }
  v.doc_lengths = reinterpret_cast<const std::uint32_t*>(at(format::kDocLengths));
  for (const Section s :
       {format::kPostingIndptr, format::kPostingBlocks, format::kPostingBytes, format::kDocLengths})
    v.lexical_bytes += h.sections[s].bytes;
  v.idf_length = h.idf_length;
  v.metric = {base + size - h.metric_bytes, h.metric_bytes};
  if (v.n_terms > 0 && v.idf_length == 0)
    for (std::size_t i = 0; i < v.n_docs; ++i) v.idf_length += v.doc_lengths[i];
  return v;
}

std::optional<std::string> unpack_text(std::string_view packed) {
  std::uint32_t n = 0;
  if (packed.size() < sizeof n) return std::nullopt;
  std::memcpy(&n, packed.data(), sizeof n);
  std::string out(n, '\0');
  uLongf got = n;
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &got,
                 reinterpret_cast<const Bytef*>(packed.data() + sizeof n),
                 static_cast<uLong>(packed.size() - sizeof n)) != Z_OK ||
      got != n)
    return std::nullopt;
  return out;
}

}  // namespace lcrwmd::io
