#pragma once
// A term's postings as an index file stores them (format version 5): blocks of up to
// kStoredBlock postings, each its documents' gaps less one and its counts less one bit-packed
// (frame of reference, as Lucene's and PISA's blocks: a stream's values at the fewest bits that
// hold its largest), with a table of the blocks' first and last documents and where their bytes
// start, so that a reader skips to the block that may hold a document and decodes that one
// block. A count of one, a posting's usual count, and the gap of a common word's neighbouring
// documents take no bits at all.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lcrwmd::io {

// Postings a stored block holds, but a list's last.
inline constexpr std::size_t kStoredBlock = 128;

struct StoredBlock {
  std::uint64_t offset;  // its bytes' start, in the postings' bytes
  std::uint32_t first;   // its first document, and its gaps' base
  std::uint32_t last;    // its last document
};
static_assert(sizeof(StoredBlock) == 16);

// Zero bytes after the last block's, so that decoding any block, whatever its bytes say, reads
// within the postings' bytes: its two widths, two streams of 32-bit values at most, and the
// 8-byte reads the decoder makes at a stream's end.
inline constexpr std::size_t kStoredPadding = 2 + 2 * 4 * kStoredBlock + 8;

// Blocks a list of n postings is stored in.
inline constexpr std::size_t stored_blocks(std::size_t n) {
  return (n + kStoredBlock - 1) / kStoredBlock;
}

// Appends the blocks of a list (docs ascending, counts positive) to `blocks` and their bytes to
// `bytes`.
void encode_postings(const std::uint32_t* docs, const std::uint32_t* counts, std::size_t n,
                     std::vector<StoredBlock>& blocks, std::vector<std::uint8_t>& bytes);

// Block `block`'s n postings (n <= kStoredBlock) decoded into docs and counts; the bytes it
// read. A width past 32 bits (a damaged block) is read as 32, and makes its bytes read
// kBadBlock, past any section's end.
std::size_t decode_block(const StoredBlock& block, const std::uint8_t* bytes, std::size_t n,
                         std::uint32_t* docs, std::uint32_t* counts);
inline constexpr std::size_t kBadBlock = ~std::size_t{0} / 2;

}  // namespace lcrwmd::io
