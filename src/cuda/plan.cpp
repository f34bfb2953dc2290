#include "cuda/plan.h"

#include <algorithm>
#include <limits>
#include <string>

#include "cuda/limits.h"
#include "cuda/sort_key.h"
#include "lcrwmd/error.h"
#include "methods/act/act_steps.h"

namespace lcrwmd::cuda {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMaxTileWords = kMaxGemmColumns;
constexpr std::size_t kMaxChunkDocs = std::numeric_limits<std::uint32_t>::max();

std::string mib(std::size_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB"; }

}  // namespace

std::size_t csr_bytes(std::span<const std::uint64_t> indptr, std::size_t begin, std::size_t end) {
  const std::size_t nnz = indptr[end] - indptr[begin];
  return (end - begin + 1) * sizeof(std::uint64_t) + nnz * (sizeof(std::uint32_t) + sizeof(float));
}

std::vector<DocRange> plan_doc_chunks(std::span<const std::uint64_t> indptr, std::size_t max_bytes,
                                      std::size_t max_docs) {
  const std::size_t n = indptr.size() - 1;
  const std::size_t doc_cap = std::min(max_docs ? max_docs : kMaxChunkDocs, kMaxChunkDocs);
  std::vector<DocRange> chunks;
  std::size_t begin = 0;
  while (begin < n) {
    if (csr_bytes(indptr, begin, begin + 1) > max_bytes)
      throw Error("document " + std::to_string(begin) + " needs " +
                  mib(csr_bytes(indptr, begin, begin + 1)) +
                  " of device memory; the resident chunks may use " + mib(max_bytes));
    // The largest end with the chunk within both caps (bytes grow with end: binary search).
    std::size_t lo = begin + 1, hi = std::min(n, begin + doc_cap);
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (csr_bytes(indptr, begin, mid) <= max_bytes)
        lo = mid;
      else
        hi = mid - 1;
    }
    chunks.push_back({begin, lo});
    begin = lo;
  }
  return chunks;
}

std::uint32_t act_reach(const SearchOptions& opt) {
  constexpr std::uint32_t kAll = std::numeric_limits<std::uint32_t>::max();
  if (implementation(opt.method).gpu != GpuPass::capped) return 0;
  const std::size_t steps = act_steps(opt);  // ICT: every step
  return steps >= kAll - 1 ? kAll : static_cast<std::uint32_t>(steps + 1);
}

std::size_t batch_bytes(const WorkShape& s, std::size_t queries, std::size_t words) {
  const std::size_t n = s.docs, f = sizeof(float);
  std::size_t bytes = words * (s.dim * f + f + 8 + 2 * 4) + queries * 64;  // query side
  if (s.pass == GpuPass::centroids)
    return bytes + queries * s.dim * f + 2 * queries * n * f +
           queries * select_capacity(n, s.k) * 16;
  const bool act = s.pass == GpuPass::capped;
  if (s.pass == GpuPass::nearest || act) {
    bytes += s.vocab * queries * f + words * f;  // Z, nearest other words
    // The squared distances D2 reads (and ACT's slots are chosen from).
    if (s.symmetric || act) bytes += s.vocab * words * f;
  }
  if (act) {
    // Per vocabulary word its slots, (cost, weight) each: at most k + 1 per query, never more
    // than the batch's words; its largest document weight.
    const std::size_t slots =
        s.act_reach >= words ? words : std::min(words, queries * std::size_t{s.act_reach});
    bytes += s.vocab * (slots * 2 * f + f);
  }
  // Output rows (twice: pairwise double-buffers them).
  bytes += queries * n * f * (s.full_matrix ? 2 : 1);
  if (!s.full_matrix) {
    bytes += queries * select_capacity(n, s.k) * 16;
    // The refinement's candidates (keys, sorted keys), at most every document of every query.
    if (s.symmetric) bytes += queries * n * (8 + 8);
  }
  return bytes + 32 * kMiB;  // CUB's temporary storage
}

std::vector<GpuBatch> plan_gpu_batches(const WorkShape& s,
                                       std::span<const std::uint64_t> query_indptr,
                                       std::size_t budget, std::size_t max_batch,
                                       std::size_t max_tile_words) {
  const std::size_t nq = query_indptr.size() - 1;
  const bool quadratic = s.pass == GpuPass::quadratic;
  // The kernels give each query of a batch its own row of blocks (a grid's y: 65535 at most).
  // max_batch 0: as many as the budget holds.
  max_batch = quadratic ? 1 : std::clamp<std::size_t>(max_batch ? max_batch : 65535, 1, 65535);
  std::size_t tile_cap = std::min(max_tile_words ? max_tile_words : kMaxTileWords, kMaxTileWords);
  std::vector<GpuBatch> batches;
  std::size_t q = 0;
  while (q < nq) {
    const std::size_t begin = q;
    auto words = [&](std::size_t end) { return query_indptr[end] - query_indptr[begin]; };
    ++q;
    while (q < nq && q - begin < max_batch &&
           batch_bytes(s, q + 1 - begin, words(q + 1)) <= budget / 2)
      ++q;
    const std::size_t fixed = batch_bytes(s, q - begin, words(q));
    // One vocabulary row per word of the tile: LC-RWMD's rows; the quadratic RWMD's rows are
    // its gathered document words, planned per chunk (plan_gather_chunks).
    const std::size_t row_bytes =
        quadratic || s.pass == GpuPass::centroids ? 0 : s.vocab * sizeof(float);
    if (fixed + row_bytes > budget)
      throw Error("the device memory budget (" + mib(budget) + ") is too small for query " +
                  std::to_string(begin) + " against " + std::to_string(s.docs) +
                  " documents per chunk (needs " + mib(fixed + row_bytes) +
                  "): raise --device-memory or lower --device-chunk");
    std::size_t tile = std::max<std::size_t>(words(q), 1);
    // Tile rows are padded to 4 columns (16-byte loads): a multiple of 4 where more than one.
    if (row_bytes)
      tile = std::min(tile, std::max<std::size_t>(1, (budget - fixed) / row_bytes / 4 * 4));
    batches.push_back({begin, q, std::max<std::size_t>(1, std::min(tile, tile_cap))});
  }
  return batches;
}

std::vector<DocRange> plan_gather_chunks(std::span<const std::uint64_t> indptr, DocRange docs,
                                         std::size_t dim, std::size_t words, std::size_t bytes) {
  // Per gathered word: its vector, norm, word id, position, minimum, and one tile row.
  const std::size_t row_bytes = (dim + 4 + words) * sizeof(float);
  std::vector<DocRange> chunks;
  std::size_t begin = docs.begin;
  while (begin < docs.end) {
    std::size_t end = begin;
    while (end < docs.end && (indptr[end + 1] - indptr[begin]) * row_bytes <= bytes) ++end;
    if (end == begin)
      throw Error("document " + std::to_string(begin) + " has too many words for the device " +
                  "memory budget of the quadratic RWMD (" + mib(bytes) + ")");
    chunks.push_back({begin, end});
    begin = end;
  }
  return chunks;
}

}  // namespace lcrwmd::cuda
