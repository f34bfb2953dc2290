// Stored posting blocks (io/posting_codec.h): each block two bytes, the widths of its gaps and of
// its counts, then the two streams, every value at its stream's width, low bits first.
#include "io/posting_codec.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

namespace lcrwmd::io {

namespace {

// The values' width and their bits, appended to `out`.
unsigned width_of(const std::uint32_t* v, std::size_t n) {
  std::uint32_t all = 0;
  for (std::size_t i = 0; i < n; ++i) all |= v[i];
  return static_cast<unsigned>(std::bit_width(all));
}

void pack(const std::uint32_t* v, std::size_t n, unsigned w, std::vector<std::uint8_t>& out) {
  std::uint64_t acc = 0;
  unsigned bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    acc |= std::uint64_t{v[i]} << bits;
    for (bits += w; bits >= 8; bits -= 8, acc >>= 8) out.push_back(static_cast<std::uint8_t>(acc));
  }
  if (bits > 0) out.push_back(static_cast<std::uint8_t>(acc));
}

std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;  // little-endian, as the file
}

// n values of w bits (w <= 32; 8 bytes readable from any value's first byte).
void unpack(const std::uint8_t* in, std::size_t n, unsigned w, std::uint32_t* out) {
  const std::uint64_t mask = (std::uint64_t{1} << w) - 1;
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint32_t>(load64(in + i * w / 8) >> (i * w % 8) & mask);
}

// A whole block's values at a width known when compiled: eight values a group of W bytes, each
// value's place a constant, so that the compiler unrolls and vectorises it.
template <unsigned W>
void unpack_block(const std::uint8_t* in, std::uint32_t* out) {
  if constexpr (W == 0) {
    std::fill_n(out, kStoredBlock, 0u);
  } else {
    constexpr std::uint64_t mask = (std::uint64_t{1} << W) - 1;
    for (std::size_t g = 0; g < kStoredBlock / 8; ++g, in += W, out += 8)
      for (unsigned j = 0; j < 8; ++j)
        out[j] = static_cast<std::uint32_t>(load64(in + j * W / 8) >> (j * W % 8) & mask);
  }
}

using UnpackBlock = void (*)(const std::uint8_t*, std::uint32_t*);
template <std::size_t... W>
constexpr std::array<UnpackBlock, sizeof...(W)> unpackers(std::index_sequence<W...>) {
  return {&unpack_block<static_cast<unsigned>(W)>...};
}
constexpr auto kUnpackBlock = unpackers(std::make_index_sequence<33>());

// A stream of n values at width w: decoded (out holds kStoredBlock); its bytes. A block of a
// quarter or more is decoded whole, as if it were full: its values past n are not its own (the
// bytes after it, or the padding), and the fixed width's loop is the faster.
std::size_t read_stream(const std::uint8_t* in, std::size_t n, unsigned w, std::uint32_t* out) {
  if (n >= kStoredBlock / 4)
    kUnpackBlock[w](in, out);
  else
    unpack(in, n, w, out);
  return (n * w + 7) / 8;
}

}  // namespace

void encode_postings(const std::uint32_t* docs, const std::uint32_t* counts, std::size_t n,
                     std::vector<StoredBlock>& blocks, std::vector<std::uint8_t>& bytes) {
  std::uint32_t gaps[kStoredBlock], less_one[kStoredBlock];
  for (std::size_t begin = 0; begin < n; begin += kStoredBlock) {
    const std::size_t m = std::min(kStoredBlock, n - begin);
    const std::uint32_t* d = docs + begin;
    blocks.push_back({bytes.size(), d[0], d[m - 1]});
    gaps[0] = 0;
    for (std::size_t i = 1; i < m; ++i) gaps[i] = d[i] - d[i - 1] - 1;
    for (std::size_t i = 0; i < m; ++i) less_one[i] = counts[begin + i] - 1;
    const unsigned wg = width_of(gaps, m), wc = width_of(less_one, m);
    bytes.push_back(static_cast<std::uint8_t>(wg));
    bytes.push_back(static_cast<std::uint8_t>(wc));
    pack(gaps, m, wg, bytes);
    pack(less_one, m, wc, bytes);
  }
}

std::size_t decode_block(const StoredBlock& block, const std::uint8_t* bytes, std::size_t n,
                         std::uint32_t* docs, std::uint32_t* counts) {
  const std::uint8_t* at = bytes + block.offset;
  const unsigned wg = std::min(at[0], std::uint8_t{32}), wc = std::min(at[1], std::uint8_t{32});
  std::size_t used = 2;
  used += read_stream(at + used, n, wg, docs);
  used += read_stream(at + used, n, wc, counts);
  std::uint32_t d = block.first;
  docs[0] = d;
  for (std::size_t i = 1; i < n; ++i) docs[i] = d += docs[i] + 1;
  for (std::size_t i = 0; i < n; ++i) ++counts[i];
  return at[0] > 32 || at[1] > 32 ? kBadBlock : used;
}

}  // namespace lcrwmd::io
