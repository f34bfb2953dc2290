// The CUDA backend's kernels. Warp-per-row (or per-document) kernels throughout: a warp reads
// a tile row, a Z row or a document's nonzeros with consecutive lanes on consecutive
// addresses, and reduces with shuffles.
#include <cmath>

#include "cuda/check.h"
#include "cuda/kernels.h"

namespace lcrwmd::cuda {
namespace {

constexpr int kWarps = 8;  // warps per block
constexpr int kThreads = kWarps * 32;
constexpr unsigned kFull = 0xffffffffu;
// As on the CPU (lc_rwmd.cpp): below this fraction of |e|^2 + |t|^2 the expansion is
// recomputed from the vectors.
constexpr float kRecomputeBelow = 1e-2f;
constexpr float kBoundSlack = 1e-4f;

unsigned blocks_for(std::size_t items, std::size_t per_block) {
  const std::size_t b = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(b < (1u << 20) ? (b ? b : 1) : (1u << 20));
}

__device__ float warp_min(float x) {
  for (int o = 16; o > 0; o /= 2) x = fminf(x, __shfl_xor_sync(kFull, x, o));
  return x;
}
__device__ float warp_sum(float x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(kFull, x, o);
  return x;
}

__device__ float sq_dist(const float* a, const float* b, int dim) {
  float s = 0;
  for (int d = 0; d < dim; ++d) {
    const float t = a[d] - b[d];
    s += t * t;
  }
  return s;
}

// Warp-uniform loop bounds: every lane runs the same number of iterations, so the shuffles
// inside see all 32 lanes.
__device__ std::size_t warp_id_global() {
  return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
}
__device__ std::size_t warps_in_grid() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x / 32;
}

__global__ void phase1_kernel(Phase1Args a) {
  extern __shared__ unsigned nearest_s[];
  if (a.nearest) {
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) nearest_s[c] = __float_as_uint(INFINITY);
    __syncthreads();
  }
  const int lane = threadIdx.x & 31;
  for (std::size_t r = warp_id_global(); r < a.rows; r += warps_in_grid()) {
    float* row = a.tile + r * a.cols;
    const float en = a.row_norms[r];
    const std::int64_t word = a.row_word ? a.row_word[r] : static_cast<std::int64_t>(r);
    float lane_min = INFINITY;
    for (int c = lane; c < a.cols; c += 32) {
      const bool self = a.col_word[c] == word;
      float d = 0.0f;
      if (!self) {
        const float tn = a.col_norms[c];
        d = fmaxf(0.0f, row[c] + en + tn);
        if (d < kRecomputeBelow * (en + tn))
          d = sq_dist(a.row_vectors + r * a.dim,
                      a.col_vectors + static_cast<std::size_t>(c) * a.dim, a.dim);
        if (a.nearest) atomicMin(&nearest_s[c], __float_as_uint(d));
      }
      if (a.keep) row[c] = d;
      lane_min = fminf(lane_min, d);
    }
    if (!a.z) continue;
    if (a.q.n_queries == 1) {
      const float m = warp_min(lane_min);
      if (lane == 0 && m < a.z[r]) a.z[r] = m;
      continue;
    }
    __syncwarp();  // the row's distances, written by all lanes, are read by all lanes below
    float* zr = a.z + r * a.q.n_queries;
    for (int j = 0; j < a.q.n_queries; ++j) {
      const int b = a.q.begin[j], e = a.q.end[j];
      if (b == e) continue;
      float m = INFINITY;
      for (int p = b + lane; p < e; p += 32) m = fminf(m, row[a.q.cols[p] - a.q.col0]);
      m = warp_min(m);
      if (lane == 0 && m < zr[j]) zr[j] = m;
    }
    __syncwarp();
  }
  if (a.nearest) {
    __syncthreads();
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) atomicMin(&a.nearest[c], nearest_s[c]);
  }
}

__global__ void fill_kernel(float* p, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = value;
}
__global__ void sqrt_kernel(float* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = sqrtf(p[i]);
}
__global__ void max_kernel(float* a, const float* b, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    a[i] = fmaxf(a[i], b[i]);
}
__global__ void gather_max_kernel(const float* bound, const std::uint32_t* list, std::size_t n,
                                  float* d2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    d2[i] = fmaxf(d2[i], bound[list[i]]);
}
__global__ void scatter_kernel(float* dst, const std::uint64_t* pos, const float* val,
                               std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[pos[i]] = val[i];
}

__device__ float bound(float d1, float nn_sum, float shared) {
  return fmaxf(d1, nn_sum - shared - kBoundSlack * nn_sum);
}

// One query: a warp per document, lanes over its nonzeros.
__global__ void sparse_one_kernel(DeviceCsr x, const float* z, bool split, const float* nn_sum,
                                  float* out) {
  const int lane = threadIdx.x & 31;
  for (std::size_t i = warp_id_global(); i < x.docs; i += warps_in_grid()) {
    float acc = 0, shared = 0;
    for (std::uint64_t p = x.indptr[i] + lane; p < x.indptr[i + 1]; p += 32) {
      const float w = x.values[p], zz = z[x.indices[p]];
      if (split) {
        acc += w * fmaxf(zz, 0.0f);
        shared -= fminf(zz, 0.0f);
      } else {
        acc += w * zz;
      }
    }
    acc = warp_sum(acc);
    if (split) shared = warp_sum(shared);
    if (lane == 0) out[i] = split ? bound(acc, nn_sum[0], shared) : acc;
  }
}

// Many queries: a block takes 32 documents and 32 queries (a lane per query, so a document's
// Z row is read coalesced), stages the 32 x 32 results and writes each query's row coalesced.
__global__ void sparse_many_kernel(DeviceCsr x, const float* z, int nq, bool split,
                                   const float* nn_sum, float* out, std::size_t stride) {
  __shared__ float res[32][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int j = blockIdx.y * 32 + lane;
  const std::size_t i0 = static_cast<std::size_t>(blockIdx.x) * 32;
  for (int t = 0; t < 32 / kWarps; ++t) {
    const int local = warp * (32 / kWarps) + t;
    const std::size_t i = i0 + local;
    float acc = 0, shared = 0;
    if (i < x.docs && j < nq) {
      for (std::uint64_t p = x.indptr[i]; p < x.indptr[i + 1]; ++p) {
        const float w = x.values[p], zz = z[std::size_t{x.indices[p]} * nq + j];
        if (split) {
          acc += w * fmaxf(zz, 0.0f);
          shared -= fminf(zz, 0.0f);
        } else {
          acc += w * zz;
        }
      }
      if (split) acc = bound(acc, nn_sum[j], shared);
    }
    res[lane][local] = acc;
  }
  __syncthreads();
  for (int t = 0; t < 32 / kWarps; ++t) {
    const int jl = warp * (32 / kWarps) + t;
    const int jj = blockIdx.y * 32 + jl;
    const std::size_t i = i0 + lane;
    if (jj < nq && i < x.docs) out[static_cast<std::size_t>(jj) * stride + i] = res[jl][lane];
  }
}

constexpr int kColumnsPerLane = 4;

// A warp per (listed document, query): lanes over the query's columns in the tile, a running
// minimum per column over the document's words.
__global__ void reverse_kernel(DeviceCsr x, const std::uint32_t* list, std::size_t n_list,
                               const float* tile, int cols, QueryColumns q, float* out,
                               std::size_t stride) {
  const int j = blockIdx.y;
  const int b = q.begin[j], e = q.end[j];
  if (b == e) return;
  const int lane = threadIdx.x & 31;
  for (std::size_t l = warp_id_global(); l < n_list; l += warps_in_grid()) {
    const std::size_t doc = list ? list[l] : l;
    float total = 0;
    for (int g = b; g < e; g += 32 * kColumnsPerLane) {
      float best[kColumnsPerLane];
      int col[kColumnsPerLane];
      for (int s = 0; s < kColumnsPerLane; ++s) {
        best[s] = INFINITY;
        const int p = g + lane + 32 * s;
        col[s] = p < e ? static_cast<int>(q.cols[p]) - q.col0 : -1;
      }
      for (std::uint64_t p = x.indptr[doc]; p < x.indptr[doc + 1]; ++p) {
        const float* row = tile + std::size_t{x.indices[p]} * cols;
        for (int s = 0; s < kColumnsPerLane; ++s)
          if (col[s] >= 0) best[s] = fminf(best[s], row[col[s]]);
      }
      for (int s = 0; s < kColumnsPerLane; ++s)
        if (col[s] >= 0) total += q.weights[g + lane + 32 * s] * sqrtf(best[s]);
    }
    total = warp_sum(total);
    if (lane == 0) out[static_cast<std::size_t>(j) * stride + l] += total;
  }
}

__global__ void centroid_kernel(DeviceCsr x, const float* vectors, int dim, float* out) {
  const int lane = threadIdx.x & 31;
  for (std::size_t i = warp_id_global(); i < x.docs; i += warps_in_grid())
    for (int d = lane; d < dim; d += 32) {
      double acc = 0;
      // Rounded like the CPU's loop (no fused multiply-add), so that a query that is a copy
      // of a resident document has the very same centroid, at exactly 0.
      for (std::uint64_t p = x.indptr[i]; p < x.indptr[i + 1]; ++p)
        acc = __dadd_rn(acc, __dmul_rn(static_cast<double>(x.values[p]),
                                       vectors[std::size_t{x.indices[p]} * dim + d]));
      out[i * dim + d] = static_cast<float>(acc);
    }
}

// A warp per document, lanes over dimensions; computed directly (not by the GEMM expansion)
// so that a document is at exactly 0 from itself, as on the CPU.
__global__ void wcd_kernel(const float* c, std::size_t n, const float* qc, int nq, int dim,
                           float* out, std::size_t stride) {
  const int lane = threadIdx.x & 31;
  for (std::size_t i = warp_id_global(); i < n; i += warps_in_grid())
    for (int j = 0; j < nq; ++j) {
      float s = 0;
      for (int d = lane; d < dim; d += 32) {
        const float t = c[i * dim + d] - qc[static_cast<std::size_t>(j) * dim + d];
        s += t * t;
      }
      s = warp_sum(s);
      if (lane == 0) out[static_cast<std::size_t>(j) * stride + i] = sqrtf(s);
    }
}

__global__ void gather_kernel(const float* vectors, const float* norms, int dim,
                              const std::uint32_t* words, std::size_t count, float* out_vectors,
                              float* out_norms, std::uint32_t* out_positions) {
  const std::size_t total = count * dim;
  for (std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; t < total;
       t += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t r = t / dim, d = t % dim;
    const std::size_t u = words[r];
    out_vectors[t] = vectors[u * dim + d];
    if (d == 0) {
      out_norms[r] = norms[u];
      out_positions[r] = static_cast<std::uint32_t>(r);
    }
  }
}

}  // namespace

void phase1_epilogue(const Phase1Args& a, cudaStream_t s) {
  if (a.rows == 0 || a.cols == 0) return;
  const std::size_t shared = a.nearest ? a.cols * sizeof(unsigned) : 0;
  phase1_kernel<<<blocks_for(a.rows, kWarps), kThreads, shared, s>>>(a);
  LCRWMD_LAUNCH_CHECK();
}

void fill(float* p, std::size_t n, float value, cudaStream_t s) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(p, n, value);
  LCRWMD_LAUNCH_CHECK();
}
void sqrt_inplace(float* p, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  sqrt_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(p, n);
  LCRWMD_LAUNCH_CHECK();
}
void max_inplace(float* a, const float* b, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  max_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(a, b, n);
  LCRWMD_LAUNCH_CHECK();
}
void gather_max(const float* bound, const std::uint32_t* list, std::size_t n, float* d2,
                cudaStream_t s) {
  if (n == 0) return;
  gather_max_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(bound, list, n, d2);
  LCRWMD_LAUNCH_CHECK();
}
void scatter(float* dst, const std::uint64_t* positions, const float* values, std::size_t n,
             cudaStream_t s) {
  if (n == 0) return;
  scatter_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(dst, positions, values, n);
  LCRWMD_LAUNCH_CHECK();
}

void sparse_times_z(const DeviceCsr& docs, const float* z, int n_queries, bool split_bound,
                    const float* nn_sum, float* out, std::size_t stride, cudaStream_t s) {
  if (docs.docs == 0 || n_queries == 0) return;
  if (n_queries == 1) {
    sparse_one_kernel<<<blocks_for(docs.docs, kWarps), kThreads, 0, s>>>(docs, z, split_bound,
                                                                         nn_sum, out);
  } else {
    const dim3 grid(static_cast<unsigned>((docs.docs + 31) / 32),
                    static_cast<unsigned>((n_queries + 31) / 32));
    sparse_many_kernel<<<grid, kThreads, 0, s>>>(docs, z, n_queries, split_bound, nn_sum, out,
                                                 stride);
  }
  LCRWMD_LAUNCH_CHECK();
}

void reverse_gather(const DeviceCsr& docs, const std::uint32_t* list, std::size_t n_list,
                    const float* tile, int cols, const QueryColumns& q, float* out,
                    std::size_t stride, cudaStream_t s) {
  if (n_list == 0 || q.n_queries == 0) return;
  const dim3 grid(blocks_for(n_list, kWarps), static_cast<unsigned>(q.n_queries));
  reverse_kernel<<<grid, kThreads, 0, s>>>(docs, list, n_list, tile, cols, q, out, stride);
  LCRWMD_LAUNCH_CHECK();
}

void centroids(const DeviceCsr& docs, const float* vectors, int dim, float* out, cudaStream_t s) {
  if (docs.docs == 0) return;
  centroid_kernel<<<blocks_for(docs.docs, kWarps), kThreads, 0, s>>>(docs, vectors, dim, out);
  LCRWMD_LAUNCH_CHECK();
}

void wcd_distances(const float* doc_centroids, std::size_t n, const float* query_centroids,
                   int n_queries, int dim, float* out, std::size_t stride, cudaStream_t s) {
  if (n == 0 || n_queries == 0) return;
  wcd_kernel<<<blocks_for(n, kWarps), kThreads, 0, s>>>(doc_centroids, n, query_centroids,
                                                        n_queries, dim, out, stride);
  LCRWMD_LAUNCH_CHECK();
}

void gather_rows(const float* vectors, const float* norms, int dim, const std::uint32_t* words,
                 std::size_t count, float* out_vectors, float* out_norms,
                 std::uint32_t* out_positions, cudaStream_t s) {
  if (count == 0) return;
  gather_kernel<<<blocks_for(count * dim, kThreads), kThreads, 0, s>>>(
      vectors, norms, dim, words, count, out_vectors, out_norms, out_positions);
  LCRWMD_LAUNCH_CHECK();
}

}  // namespace lcrwmd::cuda
