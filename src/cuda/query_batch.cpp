#include "cuda/query_batch.h"

#include <algorithm>
#include <cstring>

#include "core/batch_words.h"
#include "cuda/check.h"
#include "cuda/gemm.h"
#include "cuda/limits.h"

namespace lcrwmd::cuda {

QueryBatch::QueryBatch(const Index& index, const QuerySet& q, std::size_t b, std::size_t e,
                       std::size_t gemm_words, Precision precision)
    : begin(b),
      nq(e - b),
      weights(q.weights.begin() + static_cast<std::ptrdiff_t>(q.indptr[b]),
              q.weights.begin() + static_cast<std::ptrdiff_t>(q.indptr[e])) {
  const BatchWords w(index, q, b, e);
  pos = w.cols_indptr;
  cols.resize(w.cols.size());
  const std::size_t m = index.dim();
  const std::size_t cap = std::clamp<std::size_t>(gemm_words, 1, cuda::kMaxTileColumns);
  auto add_column = [&](std::uint32_t word) {
    vectors.insert(vectors.end(), w.vectors.begin() + static_cast<std::ptrdiff_t>(word * m),
                   w.vectors.begin() + static_cast<std::ptrdiff_t>((word + 1) * m));
    norms.push_back(w.norms[word]);
    vocab_id.push_back(w.vocab_id[word]);
    return static_cast<std::uint32_t>(norms.size() - 1);
  };
  auto add_tile = [&](int c0, std::size_t q0, std::size_t q1, std::uint64_t first,
                      std::uint64_t last) {
    tiles.push_back({c0, to_int(norms.size(), "columns"), static_cast<int>(q0),
                     static_cast<int>(q1), ranges.size()});
    for (std::size_t j = q0; j < q1; ++j)
      ranges.push_back(to_int(std::max(pos[j], first), "query word positions"));
    for (std::size_t j = q0; j < q1; ++j)
      ranges.push_back(to_int(std::min(pos[j + 1], last), "query word positions"));
    while (norms.size() % 4 != 0) {
      vectors.insert(vectors.end(), m, 0.0f);
      norms.push_back(0.0f);
      vocab_id.push_back(-1);
    }
    // Into the last span, or a new one where it would grow past a GEMM's columns.
    const int end = static_cast<int>(norms.size());
    if (spans.empty() || static_cast<std::size_t>(end - spans.back().c0) > gemm_words)
      spans.push_back({c0, end, tiles.size() - 1, tiles.size()});
    else
      spans.back() = {spans.back().c0, end, spans.back().t0, tiles.size()};
  };
  // Group g marks its words in `group`; `column` maps them to their columns.
  std::vector<std::uint32_t> group(w.words.size(), 0), column(w.words.size());
  std::vector<std::uint32_t> words_of_group;
  std::uint32_t g = 0;
  for (std::size_t j = 0; j < nq;) {
    ++g;
    std::size_t distinct = 0, end = j;
    for (; end < nq; ++end) {
      std::size_t fresh = 0;  // a query's words are distinct
      for (std::uint64_t p = pos[end]; p < pos[end + 1]; ++p) fresh += group[w.cols[p]] != g;
      if (end > j && distinct + fresh > cap) break;
      for (std::uint64_t p = pos[end]; p < pos[end + 1]; ++p) group[w.cols[p]] = g;
      distinct += fresh;
    }
    if (distinct > cap) {
      // One query longer than a tile: its words (ascending) in tiles of cap columns.
      for (std::uint64_t p0 = pos[j]; p0 < pos[j + 1]; p0 += cap) {
        const std::uint64_t p1 = std::min<std::uint64_t>(pos[j + 1], p0 + cap);
        const int c0 = static_cast<int>(norms.size());
        for (std::uint64_t p = p0; p < p1; ++p) cols[p] = add_column(w.cols[p]);
        add_tile(c0, j, j + 1, p0, p1);
      }
    } else {
      words_of_group.clear();
      for (std::uint64_t p = pos[j]; p < pos[end]; ++p) words_of_group.push_back(w.cols[p]);
      std::sort(words_of_group.begin(), words_of_group.end());
      words_of_group.erase(std::unique(words_of_group.begin(), words_of_group.end()),
                           words_of_group.end());
      const int c0 = static_cast<int>(norms.size());
      for (std::uint32_t word : words_of_group) column[word] = add_column(word);
      for (std::uint64_t p = pos[j]; p < pos[end]; ++p) cols[p] = column[w.cols[p]];
      add_tile(c0, j, end, pos[j], pos[end]);
    }
    j = end;
  }
  rounded = round_words(precision, Side::columns, vectors.data(), norms.data(), columns(), m);
}

DeviceBatch BatchUploader::upload(const QueryBatch& b, cudaStream_t s) {
  struct Part {
    const void* src;
    std::size_t bytes, at;
  } parts[] = {
      {b.vectors.data(), b.vectors.size() * sizeof(float), 0},
      {b.norms.data(), b.norms.size() * sizeof(float), 0},
      {b.vocab_id.data(), b.vocab_id.size() * sizeof(std::int64_t), 0},
      {b.cols.data(), b.cols.size() * sizeof(std::uint32_t), 0},
      {b.weights.data(), b.weights.size() * sizeof(float), 0},
      {b.pos.data(), b.pos.size() * sizeof(std::uint64_t), 0},
      {b.ranges.data(), b.ranges.size() * sizeof(int), 0},
      {b.rounded.terms.data(), b.rounded.terms.size() * sizeof(cpu::bounds::Terms), 0},
      {b.rounded.bf16.data(), b.rounded.bf16.size() * sizeof(std::uint16_t), 0},
  };
  std::size_t total = 0;
  for (Part& p : parts) {
    p.at = total;
    total += (p.bytes + 255) / 256 * 256;
  }
  uploaded_.sync();
  staging_.reserve(total);
  buffer_.reserve(total);
  for (const Part& p : parts)
    if (p.bytes) std::memcpy(staging_.data() + p.at, p.src, p.bytes);
  LCRWMD_CUDA_CHECK(
      cudaMemcpyAsync(buffer_.data(), staging_.data(), total, cudaMemcpyHostToDevice, s));
  uploaded_.record(s);
  unsigned char* base = buffer_.data();
  DeviceBatch batch;
  batch.vectors = reinterpret_cast<const float*>(base + parts[0].at);
  batch.norms = reinterpret_cast<const float*>(base + parts[1].at);
  batch.word = reinterpret_cast<const std::int64_t*>(base + parts[2].at);
  batch.q.cols = reinterpret_cast<const std::uint32_t*>(base + parts[3].at);
  batch.q.weights = reinterpret_cast<const float*>(base + parts[4].at);
  batch.q.pos = reinterpret_cast<const std::uint64_t*>(base + parts[5].at);
  batch.q.n_queries = to_int(b.nq, "queries");
  batch.ranges = reinterpret_cast<const int*>(base + parts[6].at);
  batch.terms = reinterpret_cast<const cpu::bounds::Terms*>(base + parts[7].at);
  batch.bf16 =
      b.rounded.bf16.empty() ? nullptr : reinterpret_cast<const std::uint16_t*>(base + parts[8].at);
  return batch;
}

}  // namespace lcrwmd::cuda
