// The CUDA backend's kernels after phase 1 (phase1_kernels.cu has those). Warp-per-row (or
// per-document) kernels throughout: a warp reads a tile row, a Z row or a document's nonzeros with
// consecutive lanes on consecutive addresses, and reduces with shuffles.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/numerics.h"
#include "cuda/check.h"
#include "cuda/device_helpers.cuh"
#include "cuda/kernels.h"
#include "cuda/reverse_kernels.cuh"
#include "lcrwmd/error.h"

namespace lcrwmd::cuda {
namespace {

using namespace device;
using cpu::bounds::beta;
using cpu::bounds::Terms;
using numerics::kB2Slack;

__global__ void fill_kernel(float* p, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = value;
}

__device__ float bound(float d1, float nn_sum, float shared) {
  return fmaxf(d1, nn_sum - shared - kB2Slack * nn_sum);
}

template <bool kSplit>
__device__ void accumulate(float w, float zz, float& acc, float& shared) {
  if (kSplit) {
    acc += w * fmaxf(zz, 0.0f);
    shared -= fminf(zz, 0.0f);
  } else {
    acc += w * zz;
  }
}

// One query: kLanes lanes per document (picked from the documents' mean length, so that short
// documents do not leave most of a warp idle), four nonzeros in flight per lane.
template <int kLanes, bool kSplit>
__global__ void sparse_one_kernel(DeviceCsr x, const float* z, const float* nn_sum, float* out) {
  constexpr int kDocsPerWarp = 32 / kLanes;
  const int lane = threadIdx.x & 31, sub = lane % kLanes;
  // Warp-uniform trip count: the shuffles below see all 32 lanes.
  for (std::size_t i0 = warp_id_global() * kDocsPerWarp; i0 < x.docs;
       i0 += warps_in_grid() * kDocsPerWarp) {
    const std::size_t i = i0 + lane / kLanes;
    float acc = 0, shared = 0;
    if (i < x.docs) {
      const std::uint64_t e = x.indptr[i + 1];
      for (std::uint64_t p = x.indptr[i] + sub; p < e; p += 4 * kLanes) {
        std::uint32_t u[4];
        float w[4];
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          const bool in = p + t * kLanes < e;
          u[t] = in ? x.indices[p + t * kLanes] : 0;
          w[t] = in ? x.values[p + t * kLanes] : 0.0f;
        }
        float zz[4];
#pragma unroll
        for (int t = 0; t < 4; ++t) zz[t] = z[u[t]];
#pragma unroll
        for (int t = 0; t < 4; ++t)
          if (p + t * kLanes < e) accumulate<kSplit>(w[t], zz[t], acc, shared);
      }
    }
    for (int o = kLanes / 2; o > 0; o /= 2) {
      acc += __shfl_xor_sync(kFull, acc, o);
      if (kSplit) shared += __shfl_xor_sync(kFull, shared, o);
    }
    if (i < x.docs && sub == 0) out[i] = kSplit ? bound(acc, nn_sum[0], shared) : acc;
  }
}

// Many queries: a block per 32 documents x 32 queries (docs_by_queries).
__global__ void sparse_many_kernel(DeviceCsr x, const float* z, int nq, bool split,
                                   const float* nn_sum, float* out, std::size_t stride) {
  docs_by_queries(
      x.docs, nq,
      [&](std::size_t i, int j) {
        float acc = 0, shared = 0;
        for (std::uint64_t p = x.indptr[i]; p < x.indptr[i + 1]; ++p) {
          const float w = x.values[p], zz = z[std::size_t{x.indices[p]} * nq + j];
          if (split) {
            acc += w * fmaxf(zz, 0.0f);
            shared -= fminf(zz, 0.0f);
          } else {
            acc += w * zz;
          }
        }
        return split ? bound(acc, nn_sum[j], shared) : acc;
      },
      [&](int j, std::size_t i, float d) { out[static_cast<std::size_t>(j) * stride + i] = d; });
}

constexpr int kPositionsPerLane = 4;

// D2 of (document, query j) by one block: lanes over the query's positions, the warps over
// the document's words (a short chain of dependent loads each), the warps' minima combined in
// shared memory. The cache rows are contiguous per query. Block-uniform: every thread calls
// it; thread 0 gets the result.
__device__ float reverse_distance(const ReverseArgs& a, std::size_t doc, int j) {
  __shared__ float partial[kWarps][32 * kPositionsPerLane];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::uint64_t b = a.q.pos[j], e = a.q.pos[j + 1];
  const std::uint64_t w0 = a.docs.indptr[doc], w1 = a.docs.indptr[doc + 1];
  float total = 0;
  for (std::uint64_t g = b; g < e; g += 32 * kPositionsPerLane) {
    float best[kPositionsPerLane];
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) best[s] = INFINITY;
    const std::uint64_t p0 = g + lane;
#pragma unroll 2
    for (std::uint64_t w = w0 + warp; w < w1; w += kWarps) {
      const float* row = a.cache + std::size_t{a.docs.indices[w]} * a.stride;
#pragma unroll
      for (int s = 0; s < kPositionsPerLane; ++s)
        if (p0 + 32 * s < e) best[s] = fminf(best[s], row[p0 + 32 * s]);
    }
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) partial[warp][32 * s + lane] = best[s];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
      for (int s = 0; s < kPositionsPerLane; ++s) {
        float m = partial[0][32 * s + lane];
        for (int w = 1; w < kWarps; ++w) m = fminf(m, partial[w][32 * s + lane]);
        if (p0 + 32 * s < e) total += a.q.weights[p0 + 32 * s] * sqrtf(m);
      }
    }
    __syncthreads();  // partial is refilled for the next positions
  }
  return warp == 0 ? warp_sum(total) : 0.0f;
}

struct RwmdReverse {
  __device__ float operator()(const ReverseArgs& a, std::size_t doc, int j) const {
    return reverse_distance(a, doc, j);
  }
};

// Certified D2 of (document, query j) from a cache of lo (kernels.h), in reverse_distance's
// shape, per run of positions: the least hi = lo + 2 beta over the document's words, then the
// words whose lo is at most it, each recomputed by a whole warp (exact_sq_dist, as phase 1's
// minima are). Block-uniform; thread 0 gets the result.
__device__ float certified_distance(const ReverseArgs& a, std::size_t doc, int j) {
  __shared__ float partial[kWarps][32 * kPositionsPerLane];
  __shared__ float limit[32 * kPositionsPerLane];
  const CertifiedWords& cw = a.certified;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::uint64_t b = a.q.pos[j], e = a.q.pos[j + 1];
  const std::uint64_t w0 = a.docs.indptr[doc], w1 = a.docs.indptr[doc + 1];
  float total = 0;
  for (std::uint64_t g = b; g < e; g += 32 * kPositionsPerLane) {
    const std::uint64_t p0 = g + lane;
    Terms ct[kPositionsPerLane];
    float best[kPositionsPerLane];
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) {
      best[s] = INFINITY;
      if (p0 + 32 * s < e) ct[s] = cw.col_terms[a.q.cols[p0 + 32 * s]];
    }
    for (std::uint64_t w = w0 + warp; w < w1; w += kWarps) {
      const std::uint32_t u = a.docs.indices[w];
      const Terms rt = cw.row_terms[u];
      const float* row = a.cache + std::size_t{u} * a.stride;
#pragma unroll
      for (int s = 0; s < kPositionsPerLane; ++s)
        if (p0 + 32 * s < e) best[s] = fminf(best[s], row[p0 + 32 * s] + 2.0f * beta(rt, ct[s]));
    }
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) partial[warp][32 * s + lane] = best[s];
    __syncthreads();
    for (int t = threadIdx.x; t < 32 * kPositionsPerLane; t += blockDim.x) {
      float m = partial[0][t];
      for (int w = 1; w < kWarps; ++w) m = fminf(m, partial[w][t]);
      limit[t] = m;
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) best[s] = INFINITY;
    for (std::uint64_t w = w0 + warp; w < w1; w += kWarps) {  // warp-uniform
      const std::uint32_t u = a.docs.indices[w];
      const float* row = a.cache + std::size_t{u} * a.stride;
#pragma unroll
      for (int s = 0; s < kPositionsPerLane; ++s) {
        const bool candidate = p0 + 32 * s < e && row[p0 + 32 * s] <= limit[32 * s + lane];
        for (unsigned left = __ballot_sync(kFull, candidate); left; left &= left - 1) {
          const int from = __ffs(static_cast<int>(left)) - 1;
          const std::uint32_t c = a.q.cols[g + 32 * s + from];
          const float d = cw.col_word[c] == static_cast<std::int64_t>(u)
                              ? 0.0f
                              : exact_sq_dist(cw.row_vectors + std::size_t{u} * cw.dim,
                                              cw.col_vectors + std::size_t{c} * cw.dim, cw.dim);
          if (lane == from) best[s] = fminf(best[s], d);
        }
      }
    }
#pragma unroll
    for (int s = 0; s < kPositionsPerLane; ++s) partial[warp][32 * s + lane] = best[s];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
      for (int s = 0; s < kPositionsPerLane; ++s) {
        float m = partial[0][32 * s + lane];
        for (int w = 1; w < kWarps; ++w) m = fminf(m, partial[w][32 * s + lane]);
        if (p0 + 32 * s < e) total += a.q.weights[p0 + 32 * s] * sqrtf(m);
      }
    }
    __syncthreads();  // partial and limit are refilled for the next positions
  }
  return warp == 0 ? warp_sum(total) : 0.0f;
}

struct CertifiedReverse {
  __device__ float operator()(const ReverseArgs& a, std::size_t doc, int j) const {
    return certified_distance(a, doc, j);
  }
};

// Certified pairs (reverse_pairs): the bound max(bound, D2's lower bound over the cache of lo)
// first, then D2 where that bound does not already lose against the query's k-th best.
__global__ void certified_pairs_kernel(ReverseArgs a, const std::uint32_t* docs,
                                       const std::uint32_t* queries, std::size_t n_pairs,
                                       const float* bound, std::size_t bound_stride, Worst worst,
                                       float* out) {
  __shared__ float lower;
  for (std::size_t l = blockIdx.x; l < n_pairs; l += gridDim.x) {
    const std::uint32_t doc = docs[l], j = queries[l];
    const float b = bound ? bound[static_cast<std::size_t>(j) * bound_stride + doc] : 0.0f;
    const float low = reverse_distance(a, doc, static_cast<int>(j));
    if (threadIdx.x == 0) lower = fmaxf(b, low);
    __syncthreads();
    const float at_least = lower;
    __syncthreads();  // `lower` is written again for the next pair
    if (worst.distance &&
        (at_least > worst.distance[j] || (at_least == worst.distance[j] && doc >= worst.doc[j]))) {
      if (threadIdx.x == 0) out[l] = -1.0f;
      continue;
    }
    const float d2 = certified_distance(a, doc, static_cast<int>(j));
    if (threadIdx.x == 0) out[l] = fmaxf(b, d2);
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

void fill(float* p, std::size_t n, float value, cudaStream_t s) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(p, n, value);
  LCRWMD_LAUNCH_CHECK();
}

void sparse_times_z(const DeviceCsr& docs, const float* z, int n_queries, bool split_bound,
                    const float* nn_sum, float* out, std::size_t stride, cudaStream_t s) {
  if (docs.docs == 0 || n_queries == 0) return;
  if (n_queries == 1) {
    const std::size_t mean = docs.nnz / docs.docs;
    const int lanes = mean > 48 ? 32 : mean > 20 ? 16 : 8;
    const unsigned blocks = blocks_for(docs.docs, kWarps * (32 / lanes));
    auto launch = [&](auto kernel) { kernel<<<blocks, kThreads, 0, s>>>(docs, z, nn_sum, out); };
    if (lanes == 32)
      split_bound ? launch(sparse_one_kernel<32, true>) : launch(sparse_one_kernel<32, false>);
    else if (lanes == 16)
      split_bound ? launch(sparse_one_kernel<16, true>) : launch(sparse_one_kernel<16, false>);
    else
      split_bound ? launch(sparse_one_kernel<8, true>) : launch(sparse_one_kernel<8, false>);
  } else {
    const dim3 grid(static_cast<unsigned>((docs.docs + 31) / 32),
                    static_cast<unsigned>((n_queries + 31) / 32));
    sparse_many_kernel<<<grid, kThreads, 0, s>>>(docs, z, n_queries, split_bound, nn_sum, out,
                                                 stride);
  }
  LCRWMD_LAUNCH_CHECK();
}

void reverse_pairs(const ReverseArgs& a, const std::uint32_t* docs, const std::uint32_t* queries,
                   std::size_t n_pairs, const float* bound, std::size_t bound_stride, Worst worst,
                   float* out, cudaStream_t s) {
  if (worst.distance && (a.act_reach > 0 || !a.certified.row_terms))
    throw Error("reverse_pairs: the k-th best prunes certified pairs only");
  if (a.act_reach > 0)
    return act_reverse_pairs(a, docs, queries, n_pairs, bound, bound_stride, out, s);
  if (!a.certified.row_terms)
    return launch_reverse_pairs<RwmdReverse>(a, docs, queries, n_pairs, bound, bound_stride, out,
                                             s);
  if (n_pairs == 0) return;
  certified_pairs_kernel<<<blocks_for(n_pairs, 1), kThreads, 0, s>>>(
      a, docs, queries, n_pairs, bound, bound_stride, worst, out);
  LCRWMD_LAUNCH_CHECK();
}

void reverse_all(const ReverseArgs& a, float* d, std::size_t stride, cudaStream_t s) {
  if (a.act_reach > 0) return act_reverse_all(a, d, stride, s);
  if (a.certified.row_terms) return launch_reverse_all<CertifiedReverse>(a, d, stride, s);
  launch_reverse_all<RwmdReverse>(a, d, stride, s);
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
