#pragma once
// A batch of queries as the CUDA kernels take it: phase-1 columns, tiles and GEMM spans on the
// host (QueryBatch), and all of it on the device in one buffer, uploaded in one copy.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/word_terms.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"

namespace lcrwmd::cuda {

// A batch's query words on the GPU's terms. Phase-1 tiles hold whole queries: consecutive
// queries whose distinct words fit a tile share one (a word they share is one column), and a
// query with more words than a tile spans tiles of its own. So each Z entry is finished within
// one tile (or one long query's few) and a tile's epilogue visits its own queries only. The
// GEMM runs per span of consecutive tiles, as wide as memory allows (a wide GEMM runs faster
// than several narrow ones); each tile starts on a multiple of 4 columns (padded with zero
// vectors no position uses), so that its epilogue reads 16-byte-aligned rows of the span.
struct QueryBatch {
  struct Tile {
    int c0, c1;          // columns (c1: its last word's, before the padding)
    int q0, q1;          // queries (batch-local)
    std::size_t ranges;  // its queries' first positions in it, then their ends, at ranges[...]
  };
  struct Span {
    int c0, c1;          // columns, padding included
    std::size_t t0, t1;  // tiles
  };
  std::size_t begin = 0, nq = 0;
  std::vector<float> vectors, norms;   // per column: vector (dim floats), squared norm
  RoundedWords rounded;                // per column: share of phase 1's bound (bf16: rounded)
  std::vector<std::int64_t> vocab_id;  // per column: index word id, -1 for a word it lacks
  std::vector<std::uint32_t> cols;     // per position: its column
  std::vector<float> weights;          // per position
  std::vector<std::uint64_t> pos;      // query j's positions: [pos[j], pos[j + 1])
  std::vector<Tile> tiles;
  std::vector<Span> spans;
  std::vector<int> ranges;

  // Queries [b, e) of q; gemm_words: columns of one GEMM (the memory plan's; tiles take at
  // most kMaxTileColumns); precision: phase 1's (word_terms.h).
  QueryBatch(const Index& index, const QuerySet& q, std::size_t b, std::size_t e,
             std::size_t gemm_words, Precision precision);

  std::size_t columns() const { return norms.size(); }
  std::size_t positions() const { return cols.size(); }
  std::size_t widest_span() const {
    std::size_t w = 0;
    for (const Span& sp : spans) w = std::max(w, static_cast<std::size_t>(sp.c1 - sp.c0));
    return w;
  }
};

// The batch on the device: every array in one buffer, uploaded in one copy.
struct DeviceBatch {
  const float* vectors = nullptr;             // columns x dim
  const float* norms = nullptr;               // columns
  const cpu::bounds::Terms* terms = nullptr;  // columns
  const std::uint16_t* bf16 = nullptr;        // columns x bf16_stride(dim); bf16 only
  const std::int64_t* word = nullptr;         // per column
  cuda::QueryWords q;
  const int* ranges = nullptr;  // QueryBatch::ranges
};

// Uploads batches through one pinned staging buffer (reused: a batch waits until the last
// one's copy has left it).
class BatchUploader {
 public:
  // Enqueued on s; the pointers stay valid until the next upload.
  DeviceBatch upload(const QueryBatch& b, cudaStream_t s);

 private:
  PinnedArray<unsigned char> staging_;
  DeviceArray<unsigned char> buffer_;
  Event uploaded_;  // the last batch's copy has left staging_
};

}  // namespace lcrwmd::cuda
