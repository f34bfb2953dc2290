// Postings stored in compressed blocks (io/posting_codec.h) and read through PostingReader
// (core/posting_reader.h), against the plain arrays they were made from: every block size a
// list ends on, gaps and counts of one to four bytes, seeks from anywhere, shards starting and
// ending inside blocks, the plain layout of older files, and damaged blocks refused.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/posting_reader.h"
#include "io/index_format.h"
#include "io/index_image.h"
#include "io/posting_codec.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

// An ascending list of n documents below `limit` (n <= limit), and counts of one to four
// bytes (mostly 1).
void random_list(std::size_t n, std::uint64_t limit, std::mt19937_64& rng,
                 std::vector<std::uint32_t>& docs, std::vector<std::uint32_t>& counts) {
  docs.clear();
  counts.clear();
  std::uint64_t d = rng() % std::max<std::uint64_t>(1, limit - n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    docs.push_back(static_cast<std::uint32_t>(d));
    const std::uint64_t room = limit - d - (n - i);  // gaps left to share
    const std::uint64_t gap_max =
        room == 0 ? 1 : std::min<std::uint64_t>(room / 2 + 1, 1ull << (rng() % 32));
    d += 1 + rng() % gap_max;
    const auto kind = rng() % 20;
    counts.push_back(kind < 15   ? 1
                     : kind < 18 ? 2 + static_cast<std::uint32_t>(rng() % 300)
                     : kind < 19 ? static_cast<std::uint32_t>(rng() % 0xFFFFFF) + 1
                                 : 0xFFFFFFFFu - static_cast<std::uint32_t>(rng() % 3));
  }
}

// A common word's block (neighbouring documents, each holding it once) is its two widths alone;
// a gap or count one past a power of two widens its block's stream by a bit.
TEST(StoredPostings, ABlocksBytesAreItsWidestValues) {
  std::vector<std::uint32_t> docs(io::kStoredBlock), counts(io::kStoredBlock, 1);
  for (std::size_t i = 0; i < docs.size(); ++i) docs[i] = static_cast<std::uint32_t>(1000 + i);
  std::vector<io::StoredBlock> blocks;
  std::vector<std::uint8_t> bytes;
  io::encode_postings(docs.data(), counts.data(), docs.size(), blocks, bytes);
  EXPECT_EQ(bytes.size(), 2u);
  docs.back() += 1;  // a gap of 2: one bit each
  counts[5] = 5;     // a count less one of 4: three bits each
  io::encode_postings(docs.data(), counts.data(), docs.size(), blocks, bytes);
  EXPECT_EQ(bytes.size() - 2, 2 + (io::kStoredBlock * 1 + 7) / 8 + (io::kStoredBlock * 3 + 7) / 8);
}

TEST(StoredPostings, BlocksDecodeToWhatWasEncoded) {
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> docs, counts;
  for (const std::size_t n : {1, 2, 3, 4, 5, 127, 128, 129, 255, 256, 257, 1000}) {
    for (const std::uint64_t limit :
         {std::uint64_t{n}, std::uint64_t{3} * n, std::uint64_t{1} << 32}) {
      random_list(n, limit, rng, docs, counts);
      std::vector<io::StoredBlock> blocks;
      std::vector<std::uint8_t> bytes{9, 9, 9};  // appended after what is there
      io::encode_postings(docs.data(), counts.data(), n, blocks, bytes);
      ASSERT_EQ(blocks.size(), io::stored_blocks(n));
      const std::size_t end = bytes.size();
      bytes.resize(end + io::kStoredPadding, 0);
      EXPECT_EQ(blocks[0].offset, 3u);
      std::uint32_t d[io::kStoredBlock], c[io::kStoredBlock];
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const std::size_t from = b * io::kStoredBlock, m = std::min(io::kStoredBlock, n - from);
        const std::size_t used = io::decode_block(blocks[b], bytes.data(), m, d, c);
        EXPECT_EQ(blocks[b].offset + used, b + 1 < blocks.size() ? blocks[b + 1].offset : end);
        EXPECT_EQ(blocks[b].first, docs[from]);
        EXPECT_EQ(blocks[b].last, docs[from + m - 1]);
        ASSERT_TRUE(std::equal(d, d + m, docs.begin() + static_cast<std::ptrdiff_t>(from)))
            << n << " " << limit << " block " << b;
        ASSERT_TRUE(std::equal(c, c + m, counts.begin() + static_cast<std::ptrdiff_t>(from)));
      }
    }
  }
}

// `terms` lists of the given sizes over n documents (each term on a random set of them), with
// the documents' lengths their counts' sums; and the base of random_index's documents.
IndexData with_terms(std::size_t n, const std::vector<std::size_t>& sizes, unsigned seed) {
  IndexData d = test::random_index(n, 12, 3, 4, seed);
  std::mt19937_64 rng(seed);
  d.doc_lengths.assign(n, 0);
  d.posting_indptr = {0};
  std::vector<std::uint32_t> docs, counts;
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    d.terms.push_back(std::string(1, static_cast<char>('a' + t / 26)) +
                      static_cast<char>('a' + t % 26));  // sorted
    random_list(sizes[t], n, rng, docs, counts);
    for (std::size_t p = 0; p < docs.size(); ++p) {
      counts[p] = std::min<std::uint32_t>(counts[p], 1u << 26);  // lengths stay within u32
      d.doc_lengths[docs[p]] += counts[p];
    }
    d.posting_docs.insert(d.posting_docs.end(), docs.begin(), docs.end());
    d.posting_counts.insert(d.posting_counts.end(), counts.begin(), counts.end());
    d.posting_indptr.push_back(d.posting_docs.size());
    d.term_doc_freq.push_back(static_cast<std::uint32_t>(sizes[t]));
  }
  return d;
}

const std::vector<std::size_t> kSizes = {1, 0, 2, 127, 128, 129, 256, 257, 700, 1, 3000, 5000};

// What a reader of `p` reads against the plain list (docs - first, counts) of documents
// [lo, hi) of term t: every posting, and seeks from every kind of place.
void expect_reads(const Index::Postings& p, const IndexData& d, std::size_t t, std::uint32_t lo,
                  std::uint32_t hi, std::mt19937_64& rng) {
  std::vector<std::uint32_t> docs, counts;
  for (std::uint64_t e = d.posting_indptr[t]; e < d.posting_indptr[t + 1]; ++e)
    if (d.posting_docs[e] >= lo && d.posting_docs[e] < hi) {
      docs.push_back(d.posting_docs[e] + p.first - lo);
      counts.push_back(d.posting_counts[e]);
    }
  PostingReader r(p);
  ASSERT_EQ(r.size(), docs.size()) << "term " << t;
  for (std::size_t e = 0; e < docs.size(); ++e) {  // in order, then at random
    ASSERT_EQ(r.doc(e), docs[e]) << "term " << t << " posting " << e;
    ASSERT_EQ(r.count(e), counts[e]);
  }
  for (std::size_t i = 0; i < 200 && !docs.empty(); ++i) {
    const std::size_t e = rng() % docs.size();
    ASSERT_EQ(r.doc(e), docs[e]);
    ASSERT_EQ(r.count(e), counts[e]);
  }
  // seek(e, x) against lower_bound from e: x below, at, between and past the documents, e at
  // blocks' edges and anywhere; then x ascending from one seek to the next, as the walks ask.
  const auto lower = [&](std::size_t e, std::uint32_t x) {
    return static_cast<std::size_t>(
        std::lower_bound(docs.begin() + static_cast<std::ptrdiff_t>(std::min(e, docs.size())),
                         docs.end(), x) -
        docs.begin());
  };
  const std::uint32_t top = docs.empty() ? p.first + 10 : docs.back() + 10;
  for (std::size_t i = 0; i < 400; ++i) {
    const std::size_t e =
        i % 4 == 0 ? (rng() % 4) * io::kStoredBlock + rng() % 2 : rng() % (docs.size() + 2);
    const auto x = static_cast<std::uint32_t>(p.first + rng() % (top - p.first + 1));
    ASSERT_EQ(r.seek(e, x), lower(e, x)) << "term " << t << " seek(" << e << ", " << x << ")";
  }
  std::size_t e = 0;
  for (std::uint32_t x = p.first; x <= top; x += 1 + static_cast<std::uint32_t>(rng() % 300)) {
    e = r.seek(e, x);
    ASSERT_EQ(e, lower(0, x)) << "term " << t << " ascending seek to " << x;
  }
}

// The index of `d` in the format before compressed postings (4: plain arrays).
Index plain_index(const IndexData& d) {
  const std::vector<char> v = io::index_image(d, 4);
  return Index::from_bytes(std::string(v.begin(), v.end()));
}

TEST(StoredPostings, ReadAsThePlainArraysInEitherLayout) {
  const std::size_t n = 9000;
  const IndexData d = with_terms(n, kSizes, 11);
  const Index stored = Index::from_data(d), plain = plain_index(d);
  std::mt19937_64 rng(12);
  for (const Index* ix : {&stored, &plain})
    for (std::size_t t = 0; t < kSizes.size(); ++t) {
      expect_reads(ix->postings(t), d, t, 0, static_cast<std::uint32_t>(n), rng);
      if (HasFatalFailure()) return;
    }
  // What the index holds comes back as it went in.
  const IndexData back = stored.data();
  EXPECT_EQ(back.posting_indptr, d.posting_indptr);
  EXPECT_EQ(back.posting_docs, d.posting_docs);
  EXPECT_EQ(back.posting_counts, d.posting_counts);
  // Smaller even here, where one posting in twenty has a count of up to 2^26 (its block's
  // counts then as wide).
  EXPECT_LT(stored.lexical_bytes(), plain.lexical_bytes());
}

TEST(StoredPostings, ShardsReadTheirDocumentsRun) {
  const std::size_t n = 9000;
  const IndexData d = with_terms(n, kSizes, 21);
  const Index stored = Index::from_data(d), plain = plain_index(d);
  std::mt19937_64 rng(22);
  // The 3,000-posting list's blocks' edges (its 127th, 128th, 129th document...) among them.
  const std::size_t term = 10;
  const std::uint32_t* docs = d.posting_docs.data() + d.posting_indptr[term];
  const std::vector<std::pair<std::size_t, std::size_t>> ranges = {{0, n},
                                                                   {0, 1},
                                                                   {1, n},
                                                                   {docs[127], docs[128]},
                                                                   {docs[127], docs[129] + 1},
                                                                   {docs[128], docs[1000]},
                                                                   {docs[2999], n},
                                                                   {n / 2, n / 2},
                                                                   {n - 1, n},
                                                                   {docs[0] + 1, docs[256]}};
  for (const Index* ix : {&stored, &plain})
    for (const auto& [b, e] : ranges) {
      const Index shard = ix->shard(b, e);
      for (std::size_t t = 0; t < kSizes.size(); ++t) {
        const Index::Postings p = shard.postings(t);
        EXPECT_EQ(p.first, b);
        expect_reads(p, d, t, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e), rng);
        if (HasFatalFailure()) return;
      }
    }
}

// The image of `d` with f applied to its postings' blocks and bytes, then its checksums
// made right again (what the payload checksum cannot catch: a file written wrong).
template <typename F>
std::string damaged(const IndexData& d, const F& f) {
  std::vector<char> v = io::index_image(d);
  format::FileHeader h;
  std::memcpy(&h, v.data(), sizeof h);
  auto* blocks =
      reinterpret_cast<io::StoredBlock*>(v.data() + h.sections[format::kPostingBlocks].offset);
  auto* bytes =
      reinterpret_cast<std::uint8_t*>(v.data() + h.sections[format::kPostingBytes].offset);
  f(blocks, h.sections[format::kPostingBlocks].bytes / sizeof(io::StoredBlock), bytes,
    h.sections[format::kPostingBytes].bytes);
  h.payload_hash = XXH3_64bits(v.data() + sizeof h, v.size() - sizeof h);
  h.header_hash = XXH3_64bits(&h, offsetof(format::FileHeader, header_hash));
  std::memcpy(v.data(), &h, sizeof h);
  return {v.begin(), v.end()};
}

TEST(StoredPostings, DamagedBlocksAreRefused) {
  const IndexData d = with_terms(3000, {5, 300, 1000}, 31);
  EXPECT_NO_THROW(Index::from_bytes(damaged(d, [](auto*, std::size_t, auto*, std::size_t) {})));
  const auto refused = [&](const auto& f, const char* what) {
    try {
      Index::from_bytes(damaged(d, f));
      ADD_FAILURE() << what << ": loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("postings"), std::string::npos) << e.what();
    }
  };
  refused(
      [](io::StoredBlock* b, std::size_t n, auto*, std::size_t bytes) {
        b[n - 1].offset = bytes;  // past the bytes
      },
      "a block's bytes past the section");
  refused([](io::StoredBlock* b, std::size_t, auto*,
             std::size_t) { std::swap(b[2].offset, b[3].offset); },
          "blocks' bytes out of order");
  refused([](io::StoredBlock* b, std::size_t, auto*, std::size_t) { b[4].first = b[3].last; },
          "a block starting at its predecessor's last document");
  refused([](io::StoredBlock* b, std::size_t, auto*, std::size_t) { b[5].last = 3000; },
          "a document past the index's");
  refused(
      [](io::StoredBlock* b, std::size_t, std::uint8_t* bytes, std::size_t) {
        bytes[b[6].offset + 40] ^= 0x10;  // a gap changed: the block's last is not its own
      },
      "a block's bytes changed");
  refused(
      [](io::StoredBlock* b, std::size_t, std::uint8_t* bytes, std::size_t) {
        bytes[b[7].offset] ^= 0x03;  // its gaps' width: it reads other bytes than its own
      },
      "a block's width changed");
  refused(
      [](io::StoredBlock* b, std::size_t, std::uint8_t* bytes, std::size_t) {
        bytes[b[8].offset + 1] = 33;  // its counts' width past 32 bits
      },
      "a block's width past 32 bits");
}

}  // namespace
}  // namespace lcrwmd
