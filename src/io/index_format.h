#pragma once
// On-disk layout of an index file (little-endian, version 5):
//   [FileHeader: 512 bytes][section 0][section 1]...[metric]   every section 64-byte aligned;
// the metric (lcrwmd/metric.h: its file's bytes), where the index was built with one, last.
// The header carries a hash of itself and an XXH3-64 hash of everything after it.
#include <cstddef>
#include <cstdint>

namespace lcrwmd::format {

inline constexpr char kMagic[8] = {'L', 'C', 'R', 'W', 'M', 'D', 'I', 'X'};
// 2: how the index was built (tokenizer, stop words, a fingerprint of its vectors) and the
// documents' texts. 3: the lexical part (every term with its counts, documents' lengths) that
// bm25 reads. 4: a learned metric, the file's last bytes (metric_bytes; version 3 had none
// and is read as before). 5: the postings in compressed blocks (io/posting_codec.h; version 3
// and 4 stored each posting's document and count as 4 bytes each, and are read as before).
// Older files are refused with a word to rebuild them.
inline constexpr std::uint32_t kVersion = 5;
inline constexpr std::uint32_t kOldestVersion = 3;
inline constexpr std::uint64_t kAlign = 64;

enum Section : std::uint32_t {
  kIndptr,        // u64 x (n_docs + 1)
  kIndices,       // u32 x nnz
  kValues,        // f32 x nnz
  kVectors,       // f32 x vocab x dim
  kSqNorms,       // f32 x vocab
  kDocFreq,       // u32 x vocab
  kVocabOffsets,  // u64 x (vocab + 1) into kVocabBytes
  kVocabBytes,
  kIdOffsets,  // u64 x (n_docs + 1)
  kIdBytes,
  kLabelOffsets,  // u64 x (n_docs + 1)
  kLabelBytes,
  kStopOffsets,  // u64 x (stop words + 1)
  kStopBytes,
  kTextOffsets,  // u64 x (n_docs + 1); each text: u32 length, then zlib's deflate of it
  kTextBytes,
  kTermOffsets,  // u64 x (terms + 1): every term, sorted bytewise
  kTermBytes,
  kTermDocFreq,  // u32 x terms, of idf_docs
  // u64 x (terms + 1): each term's first posting; version 5: then u64 x (terms + 1), each
  // term's first stored block.
  kPostingIndptr,
  // Version 5: io::StoredBlock x blocks, each term's in turn. 3 and 4: u32 x postings, each
  // one's document (ascending within a term).
  kPostingBlocks,
  // Version 5: the blocks' bytes, then io::kStoredPadding zeros. 3 and 4: u32 x postings, each
  // one's count.
  kPostingBytes,
  kDocLengths,  // u32 x n_docs: tokens after stop words
  kSectionCount
};

struct SectionRef {
  std::uint64_t offset;
  std::uint64_t bytes;
};

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint64_t n_docs, vocab_size, dim, nnz;
  std::uint32_t weighting;
  std::uint32_t n_sections;
  std::uint64_t file_bytes;
  SectionRef sections[kSectionCount];
  std::uint32_t tokenizer_version;
  std::uint32_t flags;  // kHasText, kHasTerms, kUnitVectors
  std::uint64_t n_stopwords;
  std::uint64_t embeddings_fingerprint;
  // The documents doc_freq and term_doc_freq count (0: these): a shard of a larger build
  // (IndexData::idf_docs) weighs queries by the whole build's frequencies; and their tokens.
  std::uint64_t idf_docs, idf_length;
  std::uint64_t n_terms, n_postings;
  // The metric's bytes, at the end of the file (0: built without one).
  std::uint64_t metric_bytes;
  std::uint64_t payload_hash;  // XXH3-64 of everything after the header
  std::uint64_t header_hash;   // XXH3-64 of the bytes before this field
};
inline constexpr std::uint32_t kHasText = 1;
inline constexpr std::uint32_t kHasTerms = 2;
// Every word vector scaled to length 1 at build time; queries' vectors are scaled alike.
inline constexpr std::uint32_t kUnitVectors = 4;
static_assert(sizeof(FileHeader) == 512);

// Version 3's header: FileHeader's fields up to the metric, then the hashes and 8 bytes unused.
struct FileHeaderV3Tail {
  std::uint64_t payload_hash;
  std::uint64_t header_hash;
  char reserved[8];
};
inline constexpr std::size_t kV3TailOffset = offsetof(FileHeader, metric_bytes);
static_assert(kV3TailOffset + sizeof(FileHeaderV3Tail) == sizeof(FileHeader));

}  // namespace lcrwmd::format
