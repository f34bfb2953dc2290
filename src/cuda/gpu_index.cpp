// The CUDA backend's driver: the resident set on the device, and per batch of queries the same
// pipeline as the CPU (lc_rwmd.cpp explains the method):
//
//   query words (one packed upload) -> tiles of columns -> cuBLAS SGEMM (vocabulary x tile)
//   -> phase1_epilogue (squared distances staged per row: Z's row minima, square-rooted after
//   the last tile; for the symmetric variants the query-major cache of squared distances and
//   the nearest other words) -> finish_bound_terms (B2, on the device) -> sparse_times_z (D1,
//   or the bound max(D1, B2)) -> top-k on the device (select_k.cu), or rows to the host.
//
// Symmetric top-k refines like the CPU, for the whole batch at once (refine.h): the exact
// D = max(D1, D2) from the cache only for the documents whose bound may still enter the top-k.
// WCD is a direct kernel over the documents' centroids; the quadratic RWMD runs the same
// kernels with each document's own word occurrences as the "vocabulary" (the paper's GPU
// baseline: T1 gathered, one GEMM, row and column minima).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include "cpu/distance_kernels.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/gemm.h"
#include "cuda/kernels.h"
#include "cuda/limits.h"
#include "cuda/plan.h"
#include "cuda/refine.h"
#include "cuda/select_k.h"
#include "cuda/sort_key.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/topk.h"
#include "methods/batch_words.h"

namespace lcrwmd {

namespace cuda {

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a sticky-free error so later calls are not blamed for it
  std::string msg = std::string("CUDA error: ") + cudaGetErrorString(e) + " (" + call + " at " +
                    file + ":" + std::to_string(line) + ")";
  if (e == cudaErrorMemoryAllocation)
    throw DeviceOutOfMemory(
        msg + "; out of GPU memory: lower --device-memory, --batch or --device-chunk");
  throw Error(msg);
}

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  std::string msg = std::string("cuBLAS error: ") + cublasGetStatusString(s) + " (" + call +
                    " at " + file + ":" + std::to_string(line) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw DeviceOutOfMemory(msg + "; out of GPU memory");
  throw Error(msg);
}

int to_int(std::size_t x, const char* what) {
  if (x > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string("too many ") + what + " for one GPU call: " + std::to_string(x));
  return static_cast<int>(x);
}

// In cuBLAS's column-major view the tile is C (cols x rows, ld) = A^T B with A the column
// vectors (dim x cols) and B the row vectors (dim x rows).
void gemm_neg2(cublasHandle_t h, const float* row_vectors, std::size_t rows,
               const float* col_vectors, std::size_t cols, std::size_t dim, float* tile,
               std::size_t ld) {
  const float alpha = -2.0f, beta = 0.0f;
  const auto i64 = [](std::size_t x) { return static_cast<std::int64_t>(x); };
  LCRWMD_CUBLAS_CHECK(cublasSgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, i64(cols), i64(rows), i64(dim),
                                     &alpha, col_vectors, i64(dim), row_vectors, i64(dim), &beta,
                                     tile, i64(ld)));
}

}  // namespace cuda

bool built_with_cuda() { return true; }

std::size_t gpu_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error, an answer
    return 0;
  }
  return static_cast<std::size_t>(n);
}

GpuDevice gpu_device(int id) {
  cudaDeviceProp p{};
  LCRWMD_CUDA_CHECK(cudaGetDeviceProperties(&p, id));
  GpuDevice g;
  g.id = id;
  g.name = p.name;
  g.compute_major = p.major;
  g.compute_minor = p.minor;
  g.total_bytes = p.totalGlobalMem;
  int current = 0;
  std::size_t free = 0, total = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(id) == cudaSuccess &&
      cudaMemGetInfo(&free, &total) == cudaSuccess)
    g.free_bytes = free;
  cudaSetDevice(current);
  cudaGetLastError();
  return g;
}

std::vector<GpuDevice> gpu_devices() {
  std::vector<GpuDevice> out;
  for (std::size_t d = 0; d < gpu_device_count(); ++d)
    out.push_back(gpu_device(static_cast<int>(d)));
  return out;
}

namespace {

using cuda::DeviceArray;
using cuda::DocRange;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Device memory left to the CUDA context, cuBLAS's workspace and allocation granularity.
constexpr std::size_t kMargin = 512 * kMiB;

using cuda::to_int;

// The index's device is current for a call; the caller's is restored after it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int id) {
    LCRWMD_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != id) LCRWMD_CUDA_CHECK(cudaSetDevice(id));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// One resident chunk of documents on the device (offsets rebased to 0).
struct Chunk {
  DocRange docs{0, 0};
  std::uint64_t first_nnz = 0, nnz = 0;
  DeviceArray<std::uint64_t> indptr;
  DeviceArray<std::uint32_t> indices;
  DeviceArray<float> values;
  DeviceArray<float> centroids;  // WCD, computed on first use
  bool has_centroids = false;

  cuda::DeviceCsr csr() const {
    return {indptr.data(), indices.data(), values.data(), docs.size(), nnz};
  }

  void upload(const Index& index, DocRange r, cudaStream_t s) {
    docs = r;
    has_centroids = false;
    const auto ip = index.indptr();
    first_nnz = ip[r.begin];
    std::vector<std::uint64_t> rebased(r.size() + 1);
    for (std::size_t i = 0; i <= r.size(); ++i) rebased[i] = ip[r.begin + i] - first_nnz;
    nnz = rebased.back();
    indptr.upload(rebased.data(), rebased.size(), s);
    indices.upload(index.indices().data() + first_nnz, nnz, s);
    values.upload(index.values().data() + first_nnz, nnz, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` goes out of scope
  }
};

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
  std::vector<std::int64_t> vocab_id;  // per column: index word id, -1 for a word it lacks
  std::vector<std::uint32_t> cols;     // per position: its column
  std::vector<float> weights;          // per position
  std::vector<std::uint64_t> pos;      // query j's positions: [pos[j], pos[j + 1])
  std::vector<Tile> tiles;
  std::vector<Span> spans;
  std::vector<int> ranges;

  // gemm_words: columns of one GEMM (the memory plan's; tiles take at most kMaxTileColumns).
  QueryBatch(const Index& index, const QuerySet& q, std::size_t b, std::size_t e,
             std::size_t gemm_words)
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
      for (std::size_t j = q0; j < q1; ++j) ranges.push_back(to_int(std::max(pos[j], first), "p"));
      for (std::size_t j = q0; j < q1; ++j)
        ranges.push_back(to_int(std::min(pos[j + 1], last), "p"));
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
  }

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
  const float* vectors = nullptr;      // columns x dim
  const float* norms = nullptr;        // columns
  const std::int64_t* word = nullptr;  // per column
  cuda::QueryWords q;
  const int* ranges = nullptr;  // QueryBatch::ranges
};

enum class Reverse {
  none,   // one-sided: D1
  bound,  // symmetric top-k: max(D1, B2), refined later where it may enter the top-k
  full,   // symmetric, every distance: max(D1, D2)
};

}  // namespace

struct GpuIndex::Impl {
  const Index& index;
  GpuOptions options;
  GpuDevice device;
  std::size_t budget = 0;  // working bytes per batch
  std::vector<DocRange> ranges;
  bool all_resident = true;
  std::size_t resident = 0;
  std::size_t uploads = 0;  // document chunks sent to the device
  std::mutex mutex;         // one stream: searches on one GpuIndex take turns

  cuda::Stream stream, copy_stream;
  cuda::Cublas blas{stream.get()};
  DeviceArray<float> vectors, norms;
  std::vector<Chunk> chunks;  // all of them, or one slot the chunks take turns in

  // Per-batch scratch, reused.
  cuda::PinnedArray<unsigned char> staging;
  DeviceArray<unsigned char> batch_buffer;
  cuda::Event uploaded;  // the last batch's copy has left `staging`
  DeviceBatch batch;
  DeviceArray<float> z, tile, cache, nn_sum;
  DeviceArray<unsigned> nearest;
  DeviceArray<float> out[2];
  DeviceArray<std::uint64_t> gather_indptr;
  DeviceArray<float> g_vectors, g_norms, q_centroids;
  DeviceArray<std::uint32_t> g_positions;
  cuda::PinnedArray<float> host_rows[2];
  cuda::Event computed[2], copied[2];
  cuda::TopKSelector selector;
  cuda::Refiner refiner;

  Impl(const Index& idx, const GpuOptions& opt, const GpuDevice& dev)
      : index(idx), options(opt), device(dev) {}

  void place() {
    const GpuOptions& opt = options;
    const cudaStream_t s = stream.get();
    const std::size_t v = index.vocab_size(), m = index.dim();
    vectors.upload(index.vectors(), v * m, s);
    norms.upload(index.sq_norms(), v, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    std::size_t free = 0, total = 0;
    LCRWMD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const auto indptr = index.indptr();
    const std::size_t csr = cuda::csr_bytes(indptr, 0, index.n_docs());
    if (opt.memory_budget) {
      budget = opt.memory_budget;
    } else {
      // Most of what the resident set leaves; where it does not fit, half of what is free.
      const std::size_t rest = free > csr + 2 * kMargin ? free - csr - kMargin : free / 2;
      budget = std::max(rest - rest / 10, std::min(free / 2, std::size_t{256} * kMiB));
    }
    if (free < budget + kMargin)
      throw Error("the device memory budget (" + std::to_string(budget / kMiB) +
                  " MiB) does not fit beside the vocabulary on " + device.name + " (" +
                  std::to_string(free / kMiB) + " MiB free)");
    const std::size_t room = free - budget - kMargin;
    ranges = cuda::plan_doc_chunks(indptr, room, opt.chunk_docs);
    all_resident = csr + ranges.size() * 64 <= room;
    resident = v * m * sizeof(float) + v * sizeof(float);
    if (all_resident) {
      chunks.resize(ranges.size());
      for (std::size_t c = 0; c < ranges.size(); ++c) upload(chunks[c], ranges[c]);
      resident += csr;
    } else {
      chunks.resize(1);
      std::fprintf(stderr,
                   "lcrwmd: the resident set (%zu MiB) does not fit on %s beside %zu MiB of "
                   "working memory; every search uploads it in %zu chunks\n",
                   csr / kMiB, device.name.c_str(), budget / kMiB, ranges.size());
    }
  }

  Chunk& chunk(std::size_t c) {
    if (all_resident) return chunks[c];
    Chunk& slot = chunks[0];
    if (slot.docs.begin != ranges[c].begin || slot.docs.end != ranges[c].end ||
        slot.indptr.data() == nullptr)
      upload(slot, ranges[c]);
    return slot;
  }

  void upload(Chunk& c, DocRange r) {
    c.upload(index, r, stream.get());
    ++uploads;
  }

  std::size_t largest_chunk() const {
    std::size_t n = 0;
    for (const DocRange& r : ranges) n = std::max(n, r.size());
    return n;
  }

  cuda::WorkShape shape(const SearchOptions& opt, std::size_t k, bool full) const {
    cuda::WorkShape w;
    w.method = opt.method;
    w.symmetric = opt.symmetric && opt.method != Method::wcd;
    w.full_matrix = full || !opt.prune;
    w.vocab = index.vocab_size();
    w.dim = index.dim();
    w.docs = largest_chunk();
    w.k = k;
    return w;
  }

  // ---- per batch -------------------------------------------------------------------------

  void upload_batch(const QueryBatch& b) {
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
    };
    std::size_t total = 0;
    for (Part& p : parts) {
      p.at = total;
      total += (p.bytes + 255) / 256 * 256;
    }
    uploaded.sync();
    staging.reserve(total);
    batch_buffer.reserve(total);
    for (const Part& p : parts)
      if (p.bytes) std::memcpy(staging.data() + p.at, p.src, p.bytes);
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(batch_buffer.data(), staging.data(), total,
                                      cudaMemcpyHostToDevice, stream.get()));
    uploaded.record(stream.get());
    unsigned char* base = batch_buffer.data();
    batch.vectors = reinterpret_cast<const float*>(base + parts[0].at);
    batch.norms = reinterpret_cast<const float*>(base + parts[1].at);
    batch.word = reinterpret_cast<const std::int64_t*>(base + parts[2].at);
    batch.q.cols = reinterpret_cast<const std::uint32_t*>(base + parts[3].at);
    batch.q.weights = reinterpret_cast<const float*>(base + parts[4].at);
    batch.q.pos = reinterpret_cast<const std::uint64_t*>(base + parts[5].at);
    batch.q.n_queries = to_int(b.nq, "queries");
    batch.ranges = reinterpret_cast<const int*>(base + parts[6].at);
  }

  // Phase 1 of the batch against `rows` row vectors (the vocabulary, or the quadratic RWMD's
  // gathered words): per span one GEMM, then the epilogue of each of its tiles, into z and,
  // where set, the cache and the nearest other words.
  void phase1_rows(const QueryBatch& b, const float* row_vectors, const float* row_norms,
                   const std::uint32_t* row_word, std::size_t rows, float* cache_out,
                   unsigned* nearest_out) {
    const std::size_t m = index.dim();
    for (const QueryBatch::Span& span : b.spans) {
      const std::size_t ld = static_cast<std::size_t>(span.c1 - span.c0);
      tile.reserve(rows * ld);
      cuda::gemm_neg2(blas.get(), row_vectors, rows,
                      batch.vectors + static_cast<std::size_t>(span.c0) * m, ld, m, tile.data(),
                      ld);
      for (std::size_t t = span.t0; t < span.t1; ++t) {
        const QueryBatch::Tile& tl = b.tiles[t];
        cuda::Phase1Args a;
        a.tile = tile.data() + (tl.c0 - span.c0);
        a.rows = rows;
        a.cols = tl.c1 - tl.c0;
        a.ld = ld;
        a.dim = static_cast<int>(m);
        a.row_vectors = row_vectors;
        a.row_norms = row_norms;
        a.row_word = row_word;
        a.col_vectors = batch.vectors + static_cast<std::size_t>(tl.c0) * m;
        a.col_norms = batch.norms + tl.c0;
        a.col_word = batch.word + tl.c0;
        a.col0 = tl.c0;
        a.q = batch.q;
        a.q0 = tl.q0;
        a.tile_queries = tl.q1 - tl.q0;
        a.tile_begin = batch.ranges + tl.ranges;
        a.tile_end = a.tile_begin + a.tile_queries;
        a.z = z.data();
        a.cache = cache_out;
        a.cache_stride = b.positions();
        a.nearest = nearest_out ? nearest_out + tl.c0 : nullptr;
        cuda::phase1_epilogue(a, stream.get());
      }
    }
  }

  // Phase 1 of LC-RWMD for the batch: Z (v x nq, sqrt of the minima); symmetric, the cache of
  // squared distances D2 reads; for Reverse::bound also B2's terms in Z and nn_sum.
  void phase1(const QueryBatch& b, Reverse rev) {
    const cudaStream_t s = stream.get();
    const std::size_t v = index.vocab_size(), w = b.columns();
    z.reserve(v * b.nq);
    if (rev != Reverse::none) cache.reserve(v * b.positions());
    const bool with_bound = rev == Reverse::bound;
    if (with_bound) {
      nearest.reserve(w);
      cuda::fill(reinterpret_cast<float*>(nearest.data()), w, INFINITY, s);
    }
    phase1_rows(b, vectors.data(), norms.data(), nullptr, v,
                rev != Reverse::none ? cache.data() : nullptr,
                with_bound ? nearest.data() : nullptr);
    if (!with_bound) return;
    nn_sum.reserve(b.nq);
    cuda::finish_bound_terms(batch.q, batch.word, nearest.data(), z.data(), nn_sum.data(), s);
  }

  cuda::ReverseArgs reverse_args(const QueryBatch& b, const cuda::DeviceCsr& docs) const {
    return {docs, cache.data(), b.positions(), batch.q};
  }

  // The batch's distances (or bounds) to the chunk's documents: dst[j * n_c + i].
  void lc_rwmd_block(const QueryBatch& b, const Chunk& c, Reverse rev, float* dst) {
    const cudaStream_t s = stream.get();
    const std::size_t n = c.docs.size();
    cuda::sparse_times_z(c.csr(), z.data(), static_cast<int>(b.nq), rev == Reverse::bound,
                         nn_sum.data(), dst, n, s);
    if (rev == Reverse::full) cuda::reverse_all(reverse_args(b, c.csr()), dst, n, s);
  }

  // Quadratic RWMD of one query (a batch of one) against the chunk: the documents' word
  // vectors gathered sub-chunk by sub-chunk, then the LC-RWMD kernels on them.
  void quadratic_block(const QueryBatch& b, const Chunk& c, bool symmetric,
                       std::size_t gather_bytes, float* dst) {
    const cudaStream_t s = stream.get();
    const std::size_t m = index.dim(), n = c.docs.size(), positions = b.positions();
    const auto ip = index.indptr();
    const std::size_t tile_cols = b.widest_span();
    const std::vector<DocRange> parts = cuda::plan_gather_chunks(
        ip, c.docs, m, tile_cols + (symmetric ? positions : 0), gather_bytes);
    std::vector<std::uint64_t> rebased;
    for (const DocRange& part : parts) {
      const std::uint64_t p0 = ip[part.begin], rows = ip[part.end] - p0;
      const std::uint64_t offset = p0 - c.first_nnz;
      const std::uint32_t* words_of_rows = c.indices.data() + offset;
      g_vectors.reserve(rows * m);
      g_norms.reserve(rows);
      g_positions.reserve(rows);
      cuda::gather_rows(vectors.data(), norms.data(), static_cast<int>(m), words_of_rows, rows,
                        g_vectors.data(), g_norms.data(), g_positions.data(), s);
      rebased.resize(part.size() + 1);
      for (std::size_t i = 0; i <= part.size(); ++i) rebased[i] = ip[part.begin + i] - p0;
      gather_indptr.upload(rebased.data(), rebased.size(), s);
      const cuda::DeviceCsr occurrences{gather_indptr.data(), g_positions.data(),
                                        c.values.data() + offset, part.size(), rows};
      z.reserve(rows);
      if (symmetric) cache.reserve(rows * positions);
      phase1_rows(b, g_vectors.data(), g_norms.data(), words_of_rows, rows,
                  symmetric ? cache.data() : nullptr, nullptr);
      float* at = dst + (part.begin - c.docs.begin);
      cuda::sparse_times_z(occurrences, z.data(), 1, false, nullptr, at, n, s);
      if (symmetric) cuda::reverse_all(reverse_args(b, occurrences), at, n, s);
      LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` and the scratch are reused
    }
  }

  void wcd_block(const QueryBatch& b, const QuerySet& q, Chunk& c, float* dst) {
    const cudaStream_t s = stream.get();
    const std::size_t m = index.dim(), n = c.docs.size();
    if (!c.has_centroids) {
      c.centroids.reserve(n * m);
      cuda::centroids(c.csr(), vectors.data(), static_cast<int>(m), c.centroids.data(), s);
      c.has_centroids = true;
    }
    std::vector<float> qc(b.nq * m);
    std::vector<double> acc(m);
    for (std::size_t j = 0; j < b.nq; ++j) {
      const std::size_t qi = b.begin + j, p = q.indptr[qi];
      cpu::weighted_centroid(
          q.words.data() + p, q.weights.data() + p, q.length(qi),
          [&](std::uint32_t u) { return query_word_vector(index, q, u); }, m, acc.data(),
          qc.data() + j * m);
    }
    q_centroids.upload(qc.data(), qc.size(), s);
    cuda::wcd_distances(c.centroids.data(), n, q_centroids.data(), static_cast<int>(b.nq),
                        static_cast<int>(m), dst, n, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // qc goes out of scope
  }

  // dst[j * n_c + i]: distances (or, for Reverse::bound, bounds) of the batch to chunk c.
  void block(const QueryBatch& b, const QuerySet& q, Chunk& c, const SearchOptions& opt,
             Reverse rev, std::size_t gather_bytes, float* dst) {
    switch (opt.method) {
      case Method::wcd:
        return wcd_block(b, q, c, dst);
      case Method::rwmd:
        return quadratic_block(b, c, opt.symmetric, gather_bytes, dst);
      case Method::lc_rwmd:
        return lc_rwmd_block(b, c, rev, dst);
      case Method::wmd:
        break;
    }
    throw Error("wmd runs on the CPU backend only (--backend cpu or auto)");
  }

  // Scratch keeps the capacity of the largest batch that used it, each array its own: after
  // batches of other shapes their sum may crowd out the next one. Given back on a failed
  // allocation (the batch is then tried once more).
  void release_scratch() {
    for (DeviceArray<float>* a :
         {&z, &tile, &cache, &nn_sum, &out[0], &out[1], &g_vectors, &g_norms, &q_centroids})
      a->release();
    nearest.release();
    gather_indptr.release();
    g_positions.release();
    selector.release();
    refiner.release();
  }

  // ---- drivers ---------------------------------------------------------------------------

  template <typename Use>
  void for_each_batch(const QuerySet& q, const SearchOptions& opt, std::size_t k, bool full,
                      SearchStats& st, Use&& use) {
    if (opt.method == Method::wmd)
      throw Error("wmd runs on the CPU backend only (--backend cpu or auto)");
    LCRWMD_CUBLAS_CHECK(cublasSetMathMode(
        blas.get(), options.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    const cuda::WorkShape ws = shape(opt, k, full);
    const auto batches =
        cuda::plan_gpu_batches(ws, q.indptr, budget, opt.batch, options.tile_words);
    st.backend = Backend::cuda;
    st.device_chunks = ranges.size();
    for (const cuda::GpuBatch& gb : batches) {
      const QueryBatch b(index, q, gb.begin, gb.end, gb.tile_words);
      upload_batch(b);
      const std::size_t fixed = cuda::batch_bytes(ws, b.nq, b.positions());
      const std::size_t gather_bytes = budget > fixed ? budget - fixed : 0;
      try {
        use(b, gather_bytes);
      } catch (const cuda::DeviceOutOfMemory&) {
        release_scratch();
        use(b, gather_bytes);
      }
      ++st.batches;
      st.distances += b.nq * index.n_docs();
      if (opt.progress) opt.progress(gb.end, q.size());
    }
  }

  SearchResults search(const QuerySet& q, std::size_t k, const SearchOptions& opt,
                       SearchStats* stats) {
    std::lock_guard lock(mutex);
    const DeviceGuard on_device(device.id);
    SearchResults res;
    res.n_queries = q.size();
    res.k = std::min(k, index.n_docs());
    res.distances.assign(res.n_queries * res.k, 0.0f);
    res.indices.assign(res.n_queries * res.k, -1);
    SearchStats st;
    const bool symmetric = opt.symmetric && opt.method != Method::wcd;
    const Reverse rev = opt.method != Method::lc_rwmd || !symmetric ? Reverse::none
                        : opt.prune                                 ? Reverse::bound
                                                                    : Reverse::full;
    std::vector<std::uint64_t> keys;
    for_each_batch(q, opt, res.k, false, st, [&](const QueryBatch& b, std::size_t gather_bytes) {
      if (opt.method == Method::lc_rwmd) phase1(b, rev);
      std::vector<TopK> best(b.nq, TopK(res.k));
      for (std::size_t ci = 0; ci < ranges.size(); ++ci) {
        Chunk& c = chunk(ci);
        const std::size_t n = c.docs.size();
        const auto first_doc = static_cast<std::int64_t>(c.docs.begin);
        out[0].reserve(b.nq * n);
        block(b, q, c, opt, rev, gather_bytes, out[0].data());
        if (rev == Reverse::bound) {
          const auto tops = refiner.topk(out[0].data(), n, res.k, reverse_args(b, c.csr()),
                                         selector, stream.get(), st.refined);
          for (std::size_t j = 0; j < b.nq; ++j)
            for (const Neighbor& nb : tops[j]) best[j].push({nb.distance, first_doc + nb.index});
        } else {
          selector.select(out[0].data(), b.nq, n, n, res.k, keys, stream.get());
          const std::size_t kk = std::min(res.k, n);
          for (std::size_t j = 0; j < b.nq; ++j)
            for (std::size_t r = 0; r < kk; ++r) {
              const std::uint64_t key = keys[j * kk + r];
              best[j].push({cuda::key_distance(key), first_doc + cuda::key_doc(key)});
            }
          if (symmetric && opt.method == Method::lc_rwmd) st.refined += b.nq * n;
        }
      }
      for (std::size_t j = 0; j < b.nq; ++j) {
        const std::vector<Neighbor> top = best[j].take_sorted();
        const std::size_t row = (b.begin + j) * res.k;
        for (std::size_t r = 0; r < top.size(); ++r) {
          res.distances[row + r] = top[r].distance;
          res.indices[row + r] = top[r].index;
        }
      }
    });
    if (stats) *stats = st;
    return res;
  }

  // Full rows, double-buffered: batch t's rows are copied to pinned memory on the copy
  // stream while batch t + 1 computes, and handed to the sink while it does.
  void pairwise(const QuerySet& q, const SearchOptions& opt, const RowSink& sink,
                SearchStats* stats) {
    std::lock_guard lock(mutex);
    const DeviceGuard on_device(device.id);
    SearchStats st;
    const std::size_t n_all = index.n_docs();
    const bool symmetric = opt.symmetric && opt.method != Method::wcd;
    const Reverse rev = opt.method == Method::lc_rwmd && symmetric ? Reverse::full : Reverse::none;
    std::size_t t = 0;
    struct Pending {
      std::size_t first = 0, count = 0;
    } pending[2];
    auto hand_over = [&](std::size_t buf) {
      if (pending[buf].count == 0) return;
      copied[buf].sync();
      sink(pending[buf].first, pending[buf].count, host_rows[buf].data());
      pending[buf].count = 0;
    };
    for_each_batch(q, opt, 0, true, st, [&](const QueryBatch& b, std::size_t gather_bytes) {
      const std::size_t buf = t++ % 2;
      hand_over(buf);  // batch t - 2's rows, if the sink has not had them yet
      host_rows[buf].reserve(b.nq * n_all);
      if (opt.method == Method::lc_rwmd) phase1(b, rev);
      for (std::size_t ci = 0; ci < ranges.size(); ++ci) {
        Chunk& c = chunk(ci);
        const std::size_t n = c.docs.size();
        out[buf].reserve(b.nq * n);
        copied[buf].wait_on(stream.get());  // the copy of this buffer's last block is done
        block(b, q, c, opt, rev, gather_bytes, out[buf].data());
        computed[buf].record(stream.get());
        computed[buf].wait_on(copy_stream.get());
        LCRWMD_CUDA_CHECK(cudaMemcpy2DAsync(
            host_rows[buf].data() + c.docs.begin, n_all * sizeof(float), out[buf].data(),
            n * sizeof(float), n * sizeof(float), b.nq, cudaMemcpyDeviceToHost, copy_stream.get()));
        copied[buf].record(copy_stream.get());
        if (!all_resident) copied[buf].sync();  // the chunk slot is refilled next
      }
      if (symmetric && opt.method == Method::lc_rwmd) st.refined += b.nq * n_all;
      pending[buf] = {b.begin, b.nq};
      hand_over(1 - buf);  // the previous batch, while this one computes
    });
    // One batch is still pending (the other was handed over during the last one).
    hand_over(0);
    hand_over(1);
    if (stats) *stats = st;
  }
};

namespace {

// Checked before any stream or handle is made, so that a machine without a GPU hears so.
GpuDevice checked_device(int id) {
  const std::size_t count = gpu_device_count();
  if (id < 0 || static_cast<std::size_t>(id) >= count)
    throw Error(count == 0 ? std::string("no CUDA device found (--backend cuda needs an NVIDIA "
                                         "GPU and its driver; --backend cpu runs without one)")
                           : "no CUDA device " + std::to_string(id) + " (found " +
                                 std::to_string(count) + ")");
  return gpu_device(id);
}

}  // namespace

GpuIndex::GpuIndex(const Index& index, const GpuOptions& options) {
  const GpuDevice device = checked_device(options.device);
  const DeviceGuard on_device(device.id);
  impl_ = std::make_unique<Impl>(index, options, device);
  impl_->place();
}
GpuIndex::GpuIndex(GpuIndex&&) noexcept = default;
GpuIndex& GpuIndex::operator=(GpuIndex&&) noexcept = default;
GpuIndex::~GpuIndex() {
  if (!impl_) return;
  // Its memory, streams and handles are released on its own device.
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != impl_->device.id &&
                        cudaSetDevice(impl_->device.id) == cudaSuccess;
  impl_.reset();
  if (switched) cudaSetDevice(previous);
}

SearchResults GpuIndex::search(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                               SearchStats* stats) const {
  return impl_->search(queries, k, options, stats);
}
void GpuIndex::pairwise(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                        SearchStats* stats) const {
  impl_->pairwise(queries, options, sink, stats);
}
const GpuDevice& GpuIndex::device() const { return impl_->device; }
std::size_t GpuIndex::chunks() const { return impl_->ranges.size(); }
std::size_t GpuIndex::resident_bytes() const { return impl_->resident; }
std::size_t GpuIndex::uploads() const { return impl_->uploads; }
void GpuIndex::set_allow_tf32(bool allow) {
  std::lock_guard lock(impl_->mutex);
  impl_->options.allow_tf32 = allow;
}
const Index& GpuIndex::index() const { return impl_->index; }

}  // namespace lcrwmd
