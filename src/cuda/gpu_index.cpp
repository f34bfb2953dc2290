// The CUDA backend's driver: the resident set on the device, and per batch of queries the same
// pipeline as the CPU (lc_rwmd.cpp explains the method):
//
//   query words -> tiles of columns -> cuBLAS SGEMM (vocabulary x tile) -> phase1_epilogue
//   (squared distances, Z row minima, nearest other word) -> sqrt(Z) -> sparse_times_z
//   (D1, or the bound max(D1, B2)) -> top-k on the device (select_k.cu), or rows to the host.
//
// Symmetric top-k refines like the CPU: the exact D = max(D1, D2) only for the documents whose
// bound beats the k-th best (reverse_gather over the kept tile). WCD is a direct kernel over
// the documents' centroids; the quadratic RWMD runs the same kernels with each document's own
// word occurrences as the "vocabulary" (the paper's GPU baseline: T1 gathered, one GEMM, row
// and column minima).
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
#include "cuda/plan.h"
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
    msg += "; out of GPU memory: lower --device-memory, --batch or --device-chunk";
  throw Error(msg);
}

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  std::string msg = std::string("cuBLAS error: ") + cublasGetStatusString(s) + " (" + call +
                    " at " + file + ":" + std::to_string(line) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) msg += "; out of GPU memory";
  throw Error(msg);
}

int to_int(std::size_t x, const char* what) {
  if (x > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string("too many ") + what + " for one GPU call: " + std::to_string(x));
  return static_cast<int>(x);
}

// tile (rows x cols, row-major) = -2 * row_vectors . col_vectors^T. In cuBLAS's column-major
// view that is C (cols x rows, ld cols) = A^T B with A the column vectors (dim x cols) and B
// the row vectors (dim x rows).
void gemm_neg2(cublasHandle_t h, const float* row_vectors, std::size_t rows,
               const float* col_vectors, int cols, int dim, float* tile) {
  const float alpha = -2.0f, beta = 0.0f;
  LCRWMD_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, cols, to_int(rows, "rows"), dim,
                                  &alpha, col_vectors, dim, row_vectors, dim, &beta, tile, cols));
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

// One resident chunk of documents on the device (offsets rebased to 0).
struct Chunk {
  DocRange docs{0, 0};
  std::uint64_t first_nnz = 0;
  DeviceArray<std::uint64_t> indptr;
  DeviceArray<std::uint32_t> indices;
  DeviceArray<float> values;
  DeviceArray<float> centroids;  // WCD, computed on first use
  bool has_centroids = false;

  cuda::DeviceCsr csr() const {
    return {indptr.data(), indices.data(), values.data(), docs.size()};
  }

  void upload(const Index& index, DocRange r, cudaStream_t s) {
    docs = r;
    has_centroids = false;
    const auto ip = index.indptr();
    first_nnz = ip[r.begin];
    std::vector<std::uint64_t> rebased(r.size() + 1);
    for (std::size_t i = 0; i <= r.size(); ++i) rebased[i] = ip[r.begin + i] - first_nnz;
    const std::size_t nnz = rebased.back();
    indptr.upload(rebased.data(), rebased.size(), s);
    indices.upload(index.indices().data() + first_nnz, nnz, s);
    values.upload(index.values().data() + first_nnz, nnz, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` goes out of scope
  }
};

// A batch's query words as tile columns (distinct words, ascending), and per query its
// positions among them (BatchWords, as the CPU lays them out), their weights, and the tiles of
// columns each GEMM takes.
struct QueryBatch : BatchWords {
  std::size_t begin = 0, nq = 0;
  std::vector<float> weights;              // per position of cols
  std::vector<std::pair<int, int>> tiles;  // column ranges [c0, c1)

  QueryBatch(const Index& index, const QuerySet& q, std::size_t b, std::size_t e,
             std::size_t tile_words)
      : BatchWords(index, q, b, e),
        begin(b),
        nq(e - b),
        weights(q.weights.begin() + static_cast<std::ptrdiff_t>(q.indptr[b]),
                q.weights.begin() + static_cast<std::ptrdiff_t>(q.indptr[e])) {
    const int w = to_int(words.size(), "query words");
    const int step = to_int(std::max<std::size_t>(tile_words, 1), "tile words");
    for (int c0 = 0; c0 < w; c0 += step) tiles.emplace_back(c0, std::min(w, c0 + step));
  }

  // Per tile, per query: the positions of its columns inside the tile, [begin, end).
  std::vector<int> ranges() const {
    std::vector<int> r(tiles.size() * 2 * nq);
    for (std::size_t t = 0; t < tiles.size(); ++t)
      for (std::size_t j = 0; j < nq; ++j) {
        const auto first = cols.begin() + static_cast<std::ptrdiff_t>(cols_indptr[j]);
        const auto last = cols.begin() + static_cast<std::ptrdiff_t>(cols_indptr[j + 1]);
        r[t * 2 * nq + j] =
            static_cast<int>(std::lower_bound(first, last, tiles[t].first) - cols.begin());
        r[t * 2 * nq + nq + j] =
            static_cast<int>(std::lower_bound(first, last, tiles[t].second) - cols.begin());
      }
    return r;
  }
};

enum class Reverse {
  none,   // one-sided: D1
  bound,  // symmetric top-k: max(D1, B2), refined later where it may enter the top-k
  full,   // symmetric, every distance: max(D1, D2)
};

}  // namespace

struct GpuIndex::Impl {
  const Index& index;
  GpuDevice device;
  std::size_t budget = 0;  // working bytes per batch
  std::vector<DocRange> ranges;
  bool all_resident = true;
  std::size_t resident = 0;
  std::mutex mutex;  // one stream: searches on one GpuIndex take turns

  cuda::Stream stream, copy_stream;
  cuda::Cublas blas{stream.get()};
  DeviceArray<float> vectors, norms;
  std::vector<Chunk> chunks;  // all of them, or one slot the chunks take turns in

  // Per-batch scratch, reused.
  DeviceArray<float> t_vectors, t_norms, weights, z, tile, nn_sum, reverse, list_d2;
  DeviceArray<std::int64_t> t_word;
  DeviceArray<std::uint32_t> cols, list;
  DeviceArray<int> col_ranges;
  DeviceArray<unsigned> nearest;
  DeviceArray<float> out[2];
  DeviceArray<std::uint64_t> b2_positions, gather_indptr;
  DeviceArray<float> b2_values, g_vectors, g_norms, q_centroids;
  DeviceArray<std::uint32_t> g_positions;
  cuda::PinnedArray<float> host_rows[2];
  cuda::Event computed[2], copied[2];
  cuda::TopKSelector selector;
  std::vector<int> host_ranges;
  bool tile_holds_all = false;  // the batch has one tile, still in `tile`

  Impl(const Index& idx, const SearchOptions& opt) : index(idx), device(pick_device(opt.device)) {}

  // Checked before any stream or handle is made, so that a machine without a GPU hears so.
  static GpuDevice pick_device(int id) {
    const std::size_t count = gpu_device_count();
    if (id < 0 || static_cast<std::size_t>(id) >= count)
      throw Error(count == 0 ? std::string("no CUDA device found (--backend cuda needs an "
                                           "NVIDIA GPU and its driver; --backend cpu runs "
                                           "without one)")
                             : "no CUDA device " + std::to_string(id) + " (found " +
                                   std::to_string(count) + ")");
    LCRWMD_CUDA_CHECK(cudaSetDevice(id));
    return gpu_device(id);
  }

  void place(const SearchOptions& opt) {
    const cudaStream_t s = stream.get();
    const std::size_t v = index.vocab_size(), m = index.dim();
    vectors.upload(index.vectors(), v * m, s);
    norms.upload(index.sq_norms(), v, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    std::size_t free = 0, total = 0;
    LCRWMD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const auto indptr = index.indptr();
    const std::size_t csr = cuda::csr_bytes(indptr, 0, index.n_docs());
    if (opt.device_memory_budget) {
      budget = opt.device_memory_budget;
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
    ranges = cuda::plan_doc_chunks(indptr, room, opt.device_chunk_docs);
    all_resident = csr + ranges.size() * 64 <= room;
    resident = v * m * sizeof(float) + v * sizeof(float);
    if (all_resident) {
      chunks.resize(ranges.size());
      for (std::size_t c = 0; c < ranges.size(); ++c) chunks[c].upload(index, ranges[c], s);
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
      slot.upload(index, ranges[c], stream.get());
    return slot;
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
    const cudaStream_t s = stream.get();
    t_vectors.upload(b.vectors.data(), b.vectors.size(), s);
    t_norms.upload(b.norms.data(), b.norms.size(), s);
    t_word.upload(b.vocab_id.data(), b.vocab_id.size(), s);
    cols.upload(b.cols.data(), b.cols.size(), s);
    weights.upload(b.weights.data(), b.weights.size(), s);
    host_ranges = b.ranges();
    col_ranges.upload(host_ranges.data(), host_ranges.size(), s);
  }

  cuda::QueryColumns columns(const QueryBatch& b, std::size_t t) const {
    const int* r = col_ranges.data() + t * 2 * b.nq;
    return {cols.data(), weights.data(), r, r + b.nq, static_cast<int>(b.nq), b.tiles[t].first};
  }

  // The tile of vocabulary x columns of tile t, as squared distances (kept in `tile` where
  // `keep` or several queries need them); with minima/with_nearest, Z's row minima and the
  // nearest other words too.
  void vocabulary_tile(const QueryBatch& b, std::size_t t, bool minima, bool with_nearest,
                       bool keep) {
    const auto [c0, c1] = b.tiles[t];
    const std::size_t v = index.vocab_size(), m = index.dim();
    const int cols_n = c1 - c0, dim = static_cast<int>(m);
    tile.reserve(v * static_cast<std::size_t>(cols_n));
    cuda::gemm_neg2(blas.get(), vectors.data(), v,
                    t_vectors.data() + static_cast<std::size_t>(c0) * m, cols_n, dim, tile.data());
    cuda::Phase1Args a;
    a.tile = tile.data();
    a.rows = v;
    a.cols = cols_n;
    a.dim = dim;
    a.row_vectors = vectors.data();
    a.row_norms = norms.data();
    a.col_vectors = t_vectors.data() + static_cast<std::size_t>(c0) * m;
    a.col_norms = t_norms.data() + c0;
    a.col_word = t_word.data() + c0;
    if (minima) {
      a.z = z.data();
      a.q = columns(b, t);
    }
    if (with_nearest) a.nearest = nearest.data() + c0;
    a.keep = keep || b.nq > 1;
    cuda::phase1_epilogue(a, stream.get());
  }

  // Phase 1 of LC-RWMD for the batch: Z (v x nq, sqrt of the minima); for Reverse::bound also
  // B2's terms in Z and nn_sum (lc_rwmd.cpp explains the encoding).
  void phase1(const QueryBatch& b, Reverse rev) {
    const cudaStream_t s = stream.get();
    const std::size_t v = index.vocab_size(), w = b.words.size();
    z.reserve(v * b.nq);
    cuda::fill(z.data(), v * b.nq, INFINITY, s);
    const bool with_nearest = rev == Reverse::bound;
    if (with_nearest) {
      nearest.reserve(w);
      cuda::fill(reinterpret_cast<float*>(nearest.data()), w, INFINITY, s);
    }
    const bool keep = rev != Reverse::none;  // D2 reads the tile
    for (std::size_t t = 0; t < b.tiles.size(); ++t)
      vocabulary_tile(b, t, true, with_nearest, keep);
    tile_holds_all = keep && b.tiles.size() == 1;
    cuda::sqrt_inplace(z.data(), v * b.nq, s);
    if (!with_nearest) return;
    std::vector<unsigned> bits(w);
    LCRWMD_CUDA_CHECK(cudaMemcpyAsync(bits.data(), nearest.data(), w * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, s));
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> sums(b.nq);
    std::vector<std::uint64_t> positions;
    std::vector<float> values;
    for (std::size_t j = 0; j < b.nq; ++j) {
      double total = 0;
      for (std::uint64_t p = b.cols_indptr[j]; p < b.cols_indptr[j + 1]; ++p) {
        const std::uint32_t c = b.cols[p];
        float nn;
        std::memcpy(&nn, &bits[c], sizeof nn);
        const float term = b.weights[p] * std::sqrt(nn);
        total += term;
        if (b.vocab_id[c] >= 0) {
          positions.push_back(static_cast<std::uint64_t>(b.vocab_id[c]) * b.nq + j);
          values.push_back(-term);
        }
      }
      sums[j] = static_cast<float>(total);
    }
    b2_positions.upload(positions.data(), positions.size(), s);
    b2_values.upload(values.data(), values.size(), s);
    cuda::scatter(z.data(), b2_positions.data(), b2_values.data(), positions.size(), s);
    nn_sum.upload(sums.data(), sums.size(), s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors go out of scope
  }

  // D2 of the listed documents (all where list is null) for the batch's queries, added into
  // dst (zeroed by the caller): from the kept tile, or tile by tile again.
  void reverse_of(const QueryBatch& b, const Chunk& c, const std::uint32_t* docs_list,
                  std::size_t n_list, std::size_t j_first, std::size_t j_count, float* dst,
                  std::size_t stride) {
    for (std::size_t t = 0; t < b.tiles.size(); ++t) {
      if (!tile_holds_all) vocabulary_tile(b, t, false, false, true);
      cuda::QueryColumns q = columns(b, t);
      q.begin += j_first;
      q.end += j_first;
      q.n_queries = static_cast<int>(j_count);
      cuda::reverse_gather(c.csr(), docs_list, n_list, tile.data(),
                           b.tiles[t].second - b.tiles[t].first, q, dst, stride, stream.get());
    }
  }

  // The batch's distances (or bounds) to the chunk's documents: dst[j * n_c + i].
  void lc_rwmd_block(const QueryBatch& b, const Chunk& c, Reverse rev, float* dst) {
    const cudaStream_t s = stream.get();
    const std::size_t n = c.docs.size();
    cuda::sparse_times_z(c.csr(), z.data(), static_cast<int>(b.nq), rev == Reverse::bound,
                         nn_sum.data(), dst, n, s);
    if (rev != Reverse::full) return;
    reverse.reserve(b.nq * n);
    cuda::fill(reverse.data(), b.nq * n, 0.0f, s);
    reverse_of(b, c, nullptr, n, 0, b.nq, reverse.data(), n);
    cuda::max_inplace(dst, reverse.data(), b.nq * n, s);
  }

  // Quadratic RWMD of one query (a batch of one) against the chunk: the documents' word
  // vectors gathered sub-chunk by sub-chunk, then the LC-RWMD kernels on them.
  void quadratic_block(const QueryBatch& b, const Chunk& c, bool symmetric,
                       std::size_t gather_bytes, float* dst) {
    const cudaStream_t s = stream.get();
    const std::size_t m = index.dim(), n = c.docs.size();
    const auto ip = index.indptr();
    const std::size_t words =
        static_cast<std::size_t>(b.tiles.front().second - b.tiles.front().first);
    const std::vector<DocRange> parts =
        cuda::plan_gather_chunks(ip, c.docs, m, words, gather_bytes);
    if (symmetric) {
      reverse.reserve(n);
      cuda::fill(reverse.data(), n, 0.0f, s);
    }
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
                                        c.values.data() + offset, part.size()};
      z.reserve(rows);
      cuda::fill(z.data(), rows, INFINITY, s);
      const std::size_t at = part.begin - c.docs.begin;
      for (std::size_t t = 0; t < b.tiles.size(); ++t) {
        const auto [c0, c1] = b.tiles[t];
        tile.reserve(rows * static_cast<std::size_t>(c1 - c0));
        cuda::gemm_neg2(blas.get(), g_vectors.data(), rows,
                        t_vectors.data() + static_cast<std::size_t>(c0) * m, c1 - c0,
                        static_cast<int>(m), tile.data());
        cuda::Phase1Args a;
        a.tile = tile.data();
        a.rows = rows;
        a.cols = c1 - c0;
        a.dim = static_cast<int>(m);
        a.row_vectors = g_vectors.data();
        a.row_norms = g_norms.data();
        a.row_word = words_of_rows;
        a.col_vectors = t_vectors.data() + static_cast<std::size_t>(c0) * m;
        a.col_norms = t_norms.data() + c0;
        a.col_word = t_word.data() + c0;
        a.z = z.data();
        a.q = columns(b, t);
        a.keep = symmetric;
        cuda::phase1_epilogue(a, s);
        if (symmetric)
          cuda::reverse_gather(occurrences, nullptr, part.size(), tile.data(), c1 - c0, a.q,
                               reverse.data() + at, n, s);
      }
      cuda::sqrt_inplace(z.data(), rows, s);
      cuda::sparse_times_z(occurrences, z.data(), 1, false, nullptr, dst + at, n, s);
      LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` and the scratch are reused
    }
    if (symmetric) cuda::max_inplace(dst, reverse.data(), n, s);
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

  // Symmetric LC-RWMD top-k of query j from its bound row: exact distances first for the
  // best bounds, then for every document whose bound still beats the k-th best.
  std::vector<Neighbor> refine_topk(const QueryBatch& b, const Chunk& c, std::size_t j,
                                    const float* bound, std::size_t k, std::size_t& refined) {
    const cudaStream_t s = stream.get();
    const std::size_t n = c.docs.size();
    TopK best(k);
    if (k == 0) return best.take_sorted();
    std::vector<std::uint64_t> first;
    selector.select(bound, 1, n, n, std::min(n, std::max(2 * k, k + 64)), first, s);
    list.reserve(n);
    list_d2.reserve(n);
    std::vector<std::uint32_t> docs(first.size());
    for (std::size_t i = 0; i < first.size(); ++i) docs[i] = cuda::key_doc(first[i]);
    auto exact_for = [&](std::size_t count) {
      cuda::fill(list_d2.data(), count, 0.0f, s);
      reverse_of(b, c, list.data(), count, j, 1, list_d2.data(), count);
      cuda::gather_max(bound, list.data(), count, list_d2.data(), s);
      std::vector<float> exact(count);
      std::vector<std::uint32_t> ids(count);
      LCRWMD_CUDA_CHECK(cudaMemcpyAsync(exact.data(), list_d2.data(), count * sizeof(float),
                                        cudaMemcpyDeviceToHost, s));
      LCRWMD_CUDA_CHECK(cudaMemcpyAsync(ids.data(), list.data(), count * sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, s));
      LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));
      for (std::size_t i = 0; i < count; ++i)
        best.push({exact[i], static_cast<std::int64_t>(ids[i])});
      refined += count;
    };
    list.upload(docs.data(), docs.size(), s);
    exact_for(docs.size());
    if (first.size() == n) return best.take_sorted();
    // D >= bound: only documents ranked after the first ones whose bound beats the k-th best.
    const std::uint64_t hi =
        best.full()
            ? cuda::sort_key(best.worst().distance, static_cast<std::uint32_t>(best.worst().index))
            : std::numeric_limits<std::uint64_t>::max();
    const std::size_t count = selector.collect_between(bound, n, first.back(), hi, list.data(), s);
    exact_for(count);
    return best.take_sorted();
  }

  // ---- drivers ---------------------------------------------------------------------------

  template <typename Use>
  void for_each_batch(const QuerySet& q, const SearchOptions& opt, std::size_t k, bool full,
                      SearchStats& st, Use&& use) {
    if (opt.method == Method::wmd)
      throw Error("wmd runs on the CPU backend only (--backend cpu or auto)");
    LCRWMD_CUDA_CHECK(cudaSetDevice(device.id));
    LCRWMD_CUBLAS_CHECK(cublasSetMathMode(
        blas.get(), opt.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    const cuda::WorkShape ws = shape(opt, k, full);
    const auto batches = cuda::plan_gpu_batches(ws, q.indptr, budget, opt.batch, opt.tile_words);
    st.backend = Backend::cuda;
    st.device_chunks = ranges.size();
    for (const cuda::GpuBatch& gb : batches) {
      const QueryBatch b(index, q, gb.begin, gb.end, gb.tile_words);
      upload_batch(b);
      const std::size_t fixed = cuda::batch_bytes(ws, b.nq, b.cols.size());
      use(b, ws, budget > fixed ? budget - fixed : 0);
      ++st.batches;
      st.distances += b.nq * index.n_docs();
      if (opt.progress) opt.progress(gb.end, q.size());
    }
  }

  SearchResults search(const QuerySet& q, std::size_t k, const SearchOptions& opt,
                       SearchStats* stats) {
    std::lock_guard lock(mutex);
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
    for_each_batch(
        q, opt, res.k, false, st,
        [&](const QueryBatch& b, const cuda::WorkShape&, std::size_t gather_bytes) {
          if (opt.method == Method::lc_rwmd) phase1(b, rev);
          std::vector<TopK> best(b.nq, TopK(res.k));
          for (std::size_t ci = 0; ci < ranges.size(); ++ci) {
            Chunk& c = chunk(ci);
            const std::size_t n = c.docs.size();
            out[0].reserve(b.nq * n);
            block(b, q, c, opt, rev, gather_bytes, out[0].data());
            const auto global = [&](std::uint64_t key) {
              return Neighbor{cuda::key_distance(key),
                              static_cast<std::int64_t>(c.docs.begin + cuda::key_doc(key))};
            };
            if (rev == Reverse::bound) {
              for (std::size_t j = 0; j < b.nq; ++j)
                for (const Neighbor& nb :
                     refine_topk(b, c, j, out[0].data() + j * n, res.k, st.refined))
                  best[j].push({nb.distance, static_cast<std::int64_t>(c.docs.begin) + nb.index});
            } else {
              selector.select(out[0].data(), b.nq, n, n, res.k, keys, stream.get());
              const std::size_t kk = std::min(res.k, n);
              for (std::size_t j = 0; j < b.nq; ++j)
                for (std::size_t r = 0; r < kk; ++r) best[j].push(global(keys[j * kk + r]));
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
    for_each_batch(
        q, opt, 0, true, st,
        [&](const QueryBatch& b, const cuda::WorkShape&, std::size_t gather_bytes) {
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
            LCRWMD_CUDA_CHECK(cudaMemcpy2DAsync(host_rows[buf].data() + c.docs.begin,
                                                n_all * sizeof(float), out[buf].data(),
                                                n * sizeof(float), n * sizeof(float), b.nq,
                                                cudaMemcpyDeviceToHost, copy_stream.get()));
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

GpuIndex::GpuIndex(const Index& index, const SearchOptions& options)
    : impl_(std::make_unique<Impl>(index, options)) {
  impl_->place(options);
}
GpuIndex::GpuIndex(GpuIndex&&) noexcept = default;
GpuIndex& GpuIndex::operator=(GpuIndex&&) noexcept = default;
GpuIndex::~GpuIndex() = default;

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

}  // namespace lcrwmd
