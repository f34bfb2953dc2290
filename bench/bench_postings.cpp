// lcrwmd_bench postings (bench_postings.h).
#include "bench_postings.h"

#include <cstdint>
#include <vector>

#include "core/posting_reader.h"
#include "io/posting_codec.h"
#include "lcrwmd/error.h"

#ifdef LCRWMD_BENCH_STREAMVBYTE
#include <streamvbyte.h>
#include <streamvbytedelta.h>
#endif

namespace lcrwmd::bench {
namespace {

constexpr std::size_t kBlock = io::kStoredBlock;

// Every list's postings, as plain arrays.
struct Lists {
  std::vector<std::uint64_t> indptr{0};
  std::vector<std::uint32_t> docs, counts;
  std::size_t size() const { return docs.size(); }
  // f(list's first posting, postings in the block) for every block of every list, in order.
  template <typename F>
  void each_block(const F& f) const {
    for (std::size_t t = 0; t + 1 < indptr.size(); ++t)
      for (std::uint64_t b = indptr[t]; b < indptr[t + 1]; b += kBlock)
        f(b, static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, indptr[t + 1] - b)));
  }
};

// A layout's bytes a posting, and the best of reps of decoding every block and summing its
// documents and counts (checked against the plain arrays' sum).
void report(const char* name, double bytes, const Lists& lists, std::size_t reps,
            std::uint64_t want, const std::function<std::uint64_t()>& read, Report& rep) {
  double best = 1e300;
  for (std::size_t r = 0; r < std::max<std::size_t>(reps, 1); ++r) {
    std::uint64_t sum = 0;
    best = std::min(best, seconds_of([&] { sum = read(); }));
    if (sum != want)
      throw Error(std::string("postings benchmark: ") + name + " read other postings");
  }
  const auto n = static_cast<double>(lists.size());
  rep.add(std::string(name) + ": bytes a posting", bytes / n, "B");
  rep.add(std::string(name) + ": ns a posting decoded", best * 1e9 / n, "ns");
}

}  // namespace

void posting_benchmarks(const Index& index, std::size_t reps, Report& rep) {
  Lists lists;
  for (std::size_t t = 0; t < index.n_terms(); ++t) {
    PostingReader r(index.postings(t));
    for (std::size_t e = 0; e < r.size(); ++e) {
      lists.docs.push_back(r.doc(e));
      lists.counts.push_back(r.count(e));
    }
    lists.indptr.push_back(lists.size());
  }
  std::printf("%zu terms, %zu postings\n", index.n_terms(), lists.size());
  if (lists.size() == 0) return;
  std::uint64_t want = 0;
  for (std::size_t e = 0; e < lists.size(); ++e) want += lists.docs[e] + lists.counts[e];
  report(
      "plain arrays", 8.0 * static_cast<double>(lists.size()), lists, reps, want,
      [&] {
        std::uint64_t sum = 0;
        for (std::size_t e = 0; e < lists.size(); ++e) sum += lists.docs[e] + lists.counts[e];
        return sum;
      },
      rep);
  std::uint32_t d[kBlock], c[kBlock];
  // The index file's blocks, with their table.
  std::vector<io::StoredBlock> blocks;
  std::vector<std::uint8_t> bytes;
  for (std::size_t t = 0; t < index.n_terms(); ++t)
    io::encode_postings(lists.docs.data() + lists.indptr[t], lists.counts.data() + lists.indptr[t],
                        lists.indptr[t + 1] - lists.indptr[t], blocks, bytes);
  const double table = static_cast<double>(blocks.size() * sizeof(io::StoredBlock));
  const double packed = static_cast<double>(bytes.size()) + table;
  bytes.resize(bytes.size() + io::kStoredPadding, 0);
  report(
      "bit-packed blocks (the index file's)", packed, lists, reps, want,
      [&] {
        std::uint64_t sum = 0;
        std::size_t k = 0;
        lists.each_block([&](std::uint64_t, std::size_t m) {
          io::decode_block(blocks[k++], bytes.data(), m, d, c);
          for (std::size_t i = 0; i < m; ++i) sum += d[i] + c[i];
        });
        return sum;
      },
      rep);
  rep.figure("packed_bytes_per_posting", packed / static_cast<double>(lists.size()));
#ifdef LCRWMD_BENCH_STREAMVBYTE
  // The same blocks in Stream VByte: gaps from the block's first document, counts less one in
  // its 0/1/2/4-byte form; the same table.
  std::vector<std::uint8_t> svb;
  std::vector<std::uint64_t> offset;
  std::uint8_t out[2 * (kBlock / 4 + 4 * kBlock)];
  lists.each_block([&](std::uint64_t b, std::size_t m) {
    offset.push_back(svb.size());
    const auto n = static_cast<std::uint32_t>(m);
    std::size_t used = streamvbyte_delta_encode(&lists.docs[b], n, out, lists.docs[b]);
    for (std::size_t i = 0; i < m; ++i) c[i] = lists.counts[b + i] - 1;
    used += streamvbyte_encode_0124(c, n, out + used);
    svb.insert(svb.end(), out, out + used);
  });
  const double svb_bytes = static_cast<double>(svb.size()) + table;
  svb.resize(svb.size() + sizeof out, 0);
  report(
      "Stream VByte blocks (libstreamvbyte)", svb_bytes, lists, reps, want,
      [&] {
        std::uint64_t sum = 0;
        std::size_t k = 0;
        lists.each_block([&](std::uint64_t b, std::size_t m) {
          const auto n = static_cast<std::uint32_t>(m);
          const std::uint8_t* at = svb.data() + offset[k++];
          at += streamvbyte_delta_decode(at, d, n, lists.docs[b]);
          streamvbyte_decode_0124(at, c, n);
          for (std::size_t i = 0; i < m; ++i) sum += d[i] + c[i] + 1;
        });
        return sum;
      },
      rep);
#else
  std::printf("(no libstreamvbyte: scripts/install-deps.sh --results installs it)\n");
#endif
}

}  // namespace lcrwmd::bench
