// Phase 1's epilogue kernels: squared distances from a GEMM tile, Z's row minima, the cache
// D2 reads, the nearest other words, and B2's terms.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/numerics.h"
#include "cuda/check.h"
#include "cuda/device_helpers.cuh"
#include "cuda/kernels.h"
#include "lcrwmd/error.h"

namespace lcrwmd::cuda {
namespace {

using namespace device;
using cpu::bounds::beta;
using cpu::bounds::Terms;
using numerics::kPhase1RecomputeBelow;

// Shared floats per staged column: each warp's row (and its nearest-word minima), then the
// block's column norms, own rows and, certified, bound terms.
constexpr int staged_arrays(bool nearest, bool certified) {
  return (nearest ? 2 * kWarps : kWarps) + 2 + (certified ? 3 : 0);
}

// A warp per row: the row's squared distances (certified: estimates) staged in shared memory
// (read from the tile once, 16 bytes a lane), then per query a minimum over its columns
// gathered from there; certified, the least hi first, then the candidates' distances
// recomputed, each by the whole warp. Lane l keeps the minimum of query j0 + l, so each run of
// 32 queries writes Z coalesced. The columns' norms, own rows and terms are staged once per
// block; the nearest other words are kept per warp (each lane owns its columns: no atomics)
// and merged when the block ends.
template <bool kNearest, bool kCache, bool kCertified>
__global__ void __launch_bounds__(kThreads) phase1_kernel(Phase1Args a, int staged) {
  extern __shared__ float smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* row_s = smem + warp * staged;
  float* nearest_w = smem + (kWarps + warp) * staged;
  float* col_norm_s = smem + (kNearest ? 2 * kWarps : kWarps) * staged;
  int* col_row_s = reinterpret_cast<int*>(col_norm_s + staged);  // its own word's row, or -1
  auto* col_terms_s = reinterpret_cast<Terms*>(col_norm_s + 2 * staged);
  for (int c = threadIdx.x; c < a.cols; c += blockDim.x) {
    col_norm_s[c] = a.col_norms[c];
    col_row_s[c] = static_cast<int>(a.col_word[c]);
    if (kCertified) col_terms_s[c] = a.col_terms[c];
  }
  if (kNearest)
    for (int c = lane; c < a.cols; c += 32) nearest_w[c] = INFINITY;
  __syncthreads();
  const int nq = a.q.n_queries;
  for (std::size_t r = warp_id_global(); r < a.rows; r += warps_in_grid()) {
    const float* row = a.tile + r * a.ld;
    const float en = a.row_norms[r];
    const int word = a.row_word ? static_cast<int>(a.row_word[r]) : static_cast<int>(r);
    Terms rt{};
    float held[kHeldDims];  // certified: the row's vector, loaded while the tile row is staged
    if (kCertified) {
      rt = a.row_terms[r];
      if (a.dim <= 32 * kHeldDims) hold_vector(a.row_vectors + r * a.dim, a.dim, held);
    }
    // Certified: the interval of column c's distance from its staged estimate.
    auto interval = [&](int c, float& lo, float& hi) {
      if (col_row_s[c] == word) {
        lo = hi = 0.0f;
        return;
      }
      const float b = beta(rt, col_terms_s[c]);
      lo = fmaxf(0.0f, row_s[c] - b);
      hi = row_s[c] + b;
    };
    for (int c4 = 4 * lane; c4 < a.cols; c4 += 128) {
      const float4 x = *reinterpret_cast<const float4*>(row + c4);
      const float xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const int c = c4 + t;
        if (c >= a.cols) break;
        float d = 0.0f;
        if (kCertified) {
          if (col_row_s[c] != word) {
            d = xs[t] + en + col_norm_s[c];
            if (kNearest)
              nearest_w[c] = fminf(nearest_w[c], fmaxf(0.0f, d - beta(rt, col_terms_s[c])));
          }
        } else if (col_row_s[c] != word) {
          const float tn = col_norm_s[c];
          d = fmaxf(0.0f, xs[t] + en + tn);
          if (d < kPhase1RecomputeBelow * (en + tn))
            d = sq_dist(a.row_vectors + r * a.dim,
                        a.col_vectors + static_cast<std::size_t>(c) * a.dim, a.dim);
          if (kNearest) nearest_w[c] = fminf(nearest_w[c], d);
        }
        row_s[c] = d;
      }
    }
    __syncwarp();
    float* cache_row = kCache ? a.cache + r * a.cache_stride : nullptr;
    for (int j0 = 0; j0 < a.tile_queries; j0 += 32) {
      float mine = INFINITY;
      const int count = min(32, a.tile_queries - j0);
      for (int jj = 0; jj < count; ++jj) {
        const int b = a.tile_begin[j0 + jj], e = a.tile_end[j0 + jj];
        float m = INFINITY;
        if (kCertified) {
          float limit = INFINITY;
          for (int p = b + lane; p < e; p += 32) {
            float lo, hi;
            interval(static_cast<int>(a.q.cols[p]) - a.col0, lo, hi);
            limit = fminf(limit, hi);
            if (kCache) cache_row[p] = lo;
          }
          limit = warp_min(limit);
          // The nearest is among the positions whose lo is at most the least hi.
          for (int p0 = b; p0 < e; p0 += 32) {
            const int p = p0 + lane;
            int c = 0;
            bool candidate = false;
            if (p < e) {
              c = static_cast<int>(a.q.cols[p]) - a.col0;
              float lo, hi;
              interval(c, lo, hi);
              candidate = lo <= limit;
            }
            for (unsigned left = __ballot_sync(kFull, candidate); left; left &= left - 1) {
              const int cc = __shfl_sync(kFull, c, __ffs(static_cast<int>(left)) - 1);
              const float* col = a.col_vectors + static_cast<std::size_t>(cc) * a.dim;
              m = fminf(m, col_row_s[cc] == word ? 0.0f
                           : a.dim <= 32 * kHeldDims
                               ? exact_sq_dist(held, col, a.dim)
                               : exact_sq_dist(a.row_vectors + r * a.dim, col, a.dim));
            }
          }
        } else {
          for (int p = b + lane; p < e; p += 32) {
            const float d = row_s[a.q.cols[p] - a.col0];
            m = fminf(m, d);
            if (kCache) cache_row[p] = d;
          }
          m = warp_min(m);
        }
        if (lane == jj) mine = m;
      }
      if (lane < count) {
        const int j = a.q0 + j0 + lane;
        const auto b = static_cast<std::uint64_t>(a.tile_begin[j0 + lane]);
        const auto e = static_cast<std::uint64_t>(a.tile_end[j0 + lane]);
        float* zp = a.z + r * nq + j;
        const float value = b == a.q.pos[j] ? mine : fminf(*zp, mine);
        *zp = e == a.q.pos[j + 1] ? sqrtf(value) : value;
      }
    }
    __syncwarp();  // the next row overwrites row_s
  }
  if (kNearest) {
    __syncthreads();
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) {
      float m = INFINITY;
      for (int w = 0; w < kWarps; ++w) m = fminf(m, smem[(kWarps + w) * staged + c]);
      if (m < INFINITY) atomicMin(&a.nearest[c], __float_as_uint(m));
    }
  }
}

__global__ void bound_terms_kernel(QueryWords q, const std::int64_t* col_word,
                                   const unsigned* nearest, float* z, float* nn_sum) {
  __shared__ double warp_totals[kWarps];
  const int j = blockIdx.x;
  double total = 0;
  for (std::uint64_t p = q.pos[j] + threadIdx.x; p < q.pos[j + 1]; p += blockDim.x) {
    const std::uint32_t c = q.cols[p];
    const float term = q.weights[p] * sqrtf(__uint_as_float(nearest[c]));
    total += term;
    if (col_word[c] >= 0) z[static_cast<std::size_t>(col_word[c]) * q.n_queries + j] = -term;
  }
  for (int o = 16; o > 0; o /= 2) total += __shfl_xor_sync(kFull, total, o);
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x >> 5] = total;
  __syncthreads();
  if (threadIdx.x == 0) {
    double sum = 0;
    for (int w = 0; w < kWarps; ++w) sum += warp_totals[w];
    nn_sum[j] = static_cast<float>(sum);
  }
}

template <bool kNearest, bool kCache, bool kCertified>
void launch_phase1(const Phase1Args& a, cudaStream_t s) {
  const int staged = (a.cols + 3) / 4 * 4;
  constexpr std::size_t kStaged = staged_arrays(kNearest, kCertified);
  const std::size_t bytes = kStaged * std::size_t(staged) * sizeof(float);
  static const bool opted_in = [] {
    const std::size_t most = kStaged * std::size_t{kMaxTileColumns} * sizeof(float);
    LCRWMD_CUDA_CHECK(cudaFuncSetAttribute(phase1_kernel<kNearest, kCache, kCertified>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(most)));
    return true;
  }();
  (void)opted_in;
  // With nearest, each block merges its minima into global memory once: long-lived blocks, but
  // enough of them that the certified rows' recomputations overlap (fewer left the symmetric
  // epilogue latency-bound, well behind the one-sided one, on an H200); without, enough to
  // cover the rows.
  const unsigned blocks =
      kNearest ? std::min(blocks_for(a.rows, kWarps), 8192u) : blocks_for(a.rows, kWarps);
  phase1_kernel<kNearest, kCache, kCertified><<<blocks, kThreads, bytes, s>>>(a, staged);
  LCRWMD_LAUNCH_CHECK();
}

template <bool kCertified>
void launch_phase1(const Phase1Args& a, cudaStream_t s) {
  if (a.nearest)
    a.cache ? launch_phase1<true, true, kCertified>(a, s)
            : launch_phase1<true, false, kCertified>(a, s);
  else
    a.cache ? launch_phase1<false, true, kCertified>(a, s)
            : launch_phase1<false, false, kCertified>(a, s);
}

}  // namespace

void phase1_epilogue(const Phase1Args& a, cudaStream_t s) {
  if (a.rows == 0 || a.cols == 0) return;
  if (a.cols > kMaxTileColumns || a.ld % 4 != 0 || a.ld < static_cast<std::size_t>(a.cols))
    throw Error("phase1_epilogue: a tile of " + std::to_string(a.cols) + " columns (row stride " +
                std::to_string(a.ld) + ")");
  if (a.row_terms && !a.col_terms)
    throw Error("phase1_epilogue: certified rows without the columns' terms");
  a.row_terms ? launch_phase1<true>(a, s) : launch_phase1<false>(a, s);
}

void finish_bound_terms(const QueryWords& q, const std::int64_t* col_word, const unsigned* nearest,
                        float* z, float* nn_sum, cudaStream_t s) {
  if (q.n_queries == 0) return;
  bound_terms_kernel<<<static_cast<unsigned>(q.n_queries), kThreads, 0, s>>>(q, col_word, nearest,
                                                                             z, nn_sum);
  LCRWMD_LAUNCH_CHECK();
}

}  // namespace lcrwmd::cuda
