// The kernels of simd.h, compiled once per level: CMake builds this file with
// LCRWMD_SIMD_LEVEL=scalar|avx2|avx512 and that level's -march. Loops are written for the
// auto-vectoriser (fixed lanes, no branches); the one gather is by hand, as the vectoriser does
// not gather. Each loop adds in the same order at every level (see simd.h).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "cpu/simd.h"
#include "cpu/simd_ot_kernels.h"
#include "cpu/simd_phase1_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifndef LCRWMD_SIMD_LEVEL
#error "built by CMake once per level: -DLCRWMD_SIMD_LEVEL=scalar|avx2|avx512"
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL {
namespace {

constexpr std::size_t kLanes = kSumLanes;
float combine(const float* a) { return combine_lanes(a); }

float sq_norm(const float* a, std::size_t m) {
  float acc[kLanes] = {};
  std::size_t d = 0;
  for (; d + kLanes <= m; d += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) acc[l] += a[d + l] * a[d + l];
  float s = 0;
  for (; d < m; ++d) s += a[d] * a[d];
  for (std::size_t l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Thirty-two partial sums (four independent vector chains: one chain of dependent additions
// is what limits this loop): lane l takes the elements d = l (mod 32), the tail as if padded
// with zeros; then the four eight-lane parts are added pairwise and combined.
float sq_dist(const float* a, const float* b, std::size_t m) {
  constexpr std::size_t kWide = 4 * kLanes;
  float part[kLanes];
#if defined(__AVX2__)
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  const auto add = [&](int k, __m256 x, __m256 y) {
    const __m256 t = _mm256_sub_ps(x, y);
    acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(t, t));  // not fused: see simd.h
  };
  std::size_t d = 0;
  for (; d + kWide <= m; d += kWide)
    for (int k = 0; k < 4; ++k)
      add(k, _mm256_loadu_ps(a + d + 8 * k), _mm256_loadu_ps(b + d + 8 * k));
  for (int k = 0; d < m; ++k, d += kLanes) {  // the tail, eight at a time, zeros past the end
    const auto left = static_cast<int>(std::min<std::size_t>(m - d, kLanes));
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    add(k, _mm256_maskload_ps(a + d, mask), _mm256_maskload_ps(b + d, mask));
  }
  _mm256_storeu_ps(part,
                   _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
#else
  float acc[kWide] = {};
  std::size_t d = 0;
  for (; d + kWide <= m; d += kWide)
    for (std::size_t l = 0; l < kWide; ++l) {
      const float t = a[d + l] - b[d + l];
      acc[l] += t * t;
    }
  for (std::size_t l = 0; d + l < m; ++l) {
    const float t = a[d + l] - b[d + l];
    acc[l] += t * t;
  }
  for (std::size_t l = 0; l < kLanes; ++l)
    part[l] = (acc[l] + acc[kLanes + l]) + (acc[2 * kLanes + l] + acc[3 * kLanes + l]);
#endif
  return combine(part);
}

#if defined(__AVX2__)
// sq_dist of G vectors against one, interleaved: each pair's additions in sq_dist's order (the
// same bits), G chains of dependent additions overlapping.
template <int G>
void sq_dist_group(const float* const* a, const float* b, std::size_t m, float* out) {
  constexpr std::size_t kWide = 4 * kLanes;
  __m256 acc[G][4];
  for (int g = 0; g < G; ++g)
    for (int k = 0; k < 4; ++k) acc[g][k] = _mm256_setzero_ps();
  const auto add = [&](int g, int k, __m256 x, __m256 y) {
    const __m256 t = _mm256_sub_ps(x, y);
    acc[g][k] = _mm256_add_ps(acc[g][k], _mm256_mul_ps(t, t));  // not fused: see simd.h
  };
  std::size_t d = 0;
  for (; d + kWide <= m; d += kWide)
    for (int k = 0; k < 4; ++k) {
      const __m256 y = _mm256_loadu_ps(b + d + 8 * k);
      for (int g = 0; g < G; ++g) add(g, k, _mm256_loadu_ps(a[g] + d + 8 * k), y);
    }
  for (int k = 0; d < m; ++k, d += kLanes) {
    const auto left = static_cast<int>(std::min<std::size_t>(m - d, kLanes));
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 y = _mm256_maskload_ps(b + d, mask);
    for (int g = 0; g < G; ++g) add(g, k, _mm256_maskload_ps(a[g] + d, mask), y);
  }
  for (int g = 0; g < G; ++g) {
    float part[kLanes];
    _mm256_storeu_ps(part, _mm256_add_ps(_mm256_add_ps(acc[g][0], acc[g][1]),
                                         _mm256_add_ps(acc[g][2], acc[g][3])));
    out[g] = combine(part);
  }
}
#endif

void sq_dist_batch(const float* const* a, const float* b, std::size_t n, std::size_t m,
                   float* out) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 4 <= n; i += 4) sq_dist_group<4>(a + i, b, m, out + i);  // 32 vector registers
#elif defined(__AVX2__)
  for (; i + 2 <= n; i += 2) sq_dist_group<2>(a + i, b, m, out + i);
#endif
  for (; i < n; ++i) out[i] = sq_dist(a[i], b, m);
}

double sq_dist_f64(const float* a, const float* b, std::size_t m) {
  double acc[4] = {};
  std::size_t d = 0;
  for (; d + 4 <= m; d += 4)
    for (std::size_t l = 0; l < 4; ++l) {
      const double t = static_cast<double>(a[d + l]) - static_cast<double>(b[d + l]);
      acc[l] += t * t;
    }
  double s = 0;
  for (; d < m; ++d) {
    const double t = static_cast<double>(a[d]) - static_cast<double>(b[d]);
    s += t * t;
  }
  return s + (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// The eight-lane part of a sparse dot: lane l sums the products p = l (mod 8) below h rounded
// down to eight; returns where the tail begins. kSplit: see SplitDot.
#if defined(__AVX2__)
template <bool kSplit>
std::size_t sparse_lanes(const std::uint32_t* idx, const float* val, std::size_t h, const float* z,
                         float* dot, float* negative) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 d = zero, n = zero;
  std::size_t p = 0;
  for (; p + kLanes <= h; p += kLanes) {
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + p));
    __m256 x = _mm256_i32gather_ps(z, i, 4);
    if constexpr (kSplit) {
      n = _mm256_sub_ps(n, _mm256_min_ps(x, zero));
      x = _mm256_max_ps(x, zero);
    }
    d = _mm256_add_ps(d, _mm256_mul_ps(_mm256_loadu_ps(val + p), x));  // not fused: see simd.h
  }
  _mm256_storeu_ps(dot, d);
  if constexpr (kSplit) _mm256_storeu_ps(negative, n);
  return p;
}
#else
template <bool kSplit>
std::size_t sparse_lanes(const std::uint32_t* idx, const float* val, std::size_t h, const float* z,
                         float* dot, float* negative) {
  std::size_t p = 0;
  for (; p + kLanes <= h; p += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      float x = z[idx[p + l]];
      if constexpr (kSplit) {
        negative[l] -= std::min(x, 0.0f);
        x = std::max(x, 0.0f);
      }
      dot[l] += val[p + l] * x;
    }
  return p;
}
#endif

// One word's ACT-1 transfer (see simd.h).
inline float act1_term(float v, float c0, float m0, float c1) {
  const float moved = std::min(v, m0);
  return moved * c0 + (v - moved) * c1;
}

float act1_dot(const std::uint32_t* idx, const float* val, std::size_t h, const float* slots) {
  float lanes[kLanes] = {};
  std::size_t p = 0;
#if defined(__AVX2__)
  __m256 acc = _mm256_setzero_ps();
  // Eight 16-byte rows loaded whole and transposed (cheaper than three gathers): a_l holds
  // rows l and l + 4, so each shuffle's output lanes are words p .. p + 7 in order.
  const auto row = [&](std::size_t q) { return _mm_loadu_ps(slots + 4 * std::size_t{idx[q]}); };
  for (; p + kLanes <= h; p += kLanes) {
    const __m256 a0 = _mm256_set_m128(row(p + 4), row(p));
    const __m256 a1 = _mm256_set_m128(row(p + 5), row(p + 1));
    const __m256 a2 = _mm256_set_m128(row(p + 6), row(p + 2));
    const __m256 a3 = _mm256_set_m128(row(p + 7), row(p + 3));
    const __m256 lo01 = _mm256_unpacklo_ps(a0, a1), lo23 = _mm256_unpacklo_ps(a2, a3);
    const __m256 hi01 = _mm256_unpackhi_ps(a0, a1), hi23 = _mm256_unpackhi_ps(a2, a3);
    const __m256 c0 = _mm256_shuffle_ps(lo01, lo23, 0x44);
    const __m256 m0 = _mm256_shuffle_ps(lo01, lo23, 0xEE);
    const __m256 c1 = _mm256_shuffle_ps(hi01, hi23, 0x44);
    const __m256 v = _mm256_loadu_ps(val + p);
    const __m256 moved = _mm256_min_ps(v, m0);
    // not fused, in act1_term's order: see simd.h
    acc = _mm256_add_ps(
        acc, _mm256_add_ps(_mm256_mul_ps(moved, c0), _mm256_mul_ps(_mm256_sub_ps(v, moved), c1)));
  }
  _mm256_storeu_ps(lanes, acc);
#else
  for (; p + kLanes <= h; p += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      const float* s = slots + 4 * std::size_t{idx[p + l]};
      lanes[l] += act1_term(val[p + l], s[0], s[1], s[2]);
    }
#endif
  float tail = 0;
  for (; p < h; ++p) {
    const float* s = slots + 4 * std::size_t{idx[p]};
    tail += act1_term(val[p], s[0], s[1], s[2]);
  }
  return combine(lanes) + tail;
}

void act1_rows(const std::uint32_t* idx, const float* val, std::size_t h, const float* slots,
               std::size_t q, float* acc, float* lanes) {
  std::fill(lanes, lanes + kLanes * q, 0.0f);
  std::fill(acc, acc + q, 0.0f);  // the tail until the end
  const std::size_t h8 = h / kLanes * kLanes;
  for (std::size_t p = 0; p < h; ++p) {
    float* sum = p < h8 ? lanes + (p % kLanes) * q : acc;
    const float v = val[p];
    const float* s = slots + std::size_t{idx[p]} * q * 4;
    for (std::size_t j = 0; j < q; ++j)
      sum[j] += act1_term(v, s[4 * j], s[4 * j + 1], s[4 * j + 2]);
  }
  for (std::size_t j = 0; j < q; ++j) acc[j] = combine_lanes(lanes + j, q) + acc[j];
}

float sparse_dot(const std::uint32_t* idx, const float* val, std::size_t h, const float* z) {
  float lanes[kLanes] = {};
  std::size_t p = sparse_lanes<false>(idx, val, h, z, lanes, nullptr);
  float tail = 0;
  for (; p < h; ++p) tail += val[p] * z[idx[p]];
  return combine(lanes) + tail;
}

SplitDot sparse_dot_split(const std::uint32_t* idx, const float* val, std::size_t h,
                          const float* z) {
  float dot[kLanes] = {}, negative[kLanes] = {};
  std::size_t p = sparse_lanes<true>(idx, val, h, z, dot, negative);
  SplitDot tail{0, 0};
  for (; p < h; ++p) {
    const float x = z[idx[p]];
    tail.dot += val[p] * std::max(x, 0.0f);
    tail.negative -= std::min(x, 0.0f);
  }
  return {combine(dot) + tail.dot, combine(negative) + tail.negative};
}

float min_of(const float* x, std::size_t n, float init) {
  float acc[kLanes];
  std::fill(acc, acc + kLanes, init);
  std::size_t r = 0;
  for (; r + kLanes <= n; r += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) acc[l] = std::min(acc[l], x[r + l]);
  for (; r < n; ++r) acc[0] = std::min(acc[0], x[r]);
  return *std::min_element(acc, acc + kLanes);
}

float min_dist_minus(const float* sq, const float* g, std::size_t n) {
  float acc[kLanes];
  std::fill(acc, acc + kLanes, std::numeric_limits<float>::infinity());
  std::size_t t = 0;
  for (; t + kLanes <= n; t += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
      acc[l] = std::min(acc[l], std::sqrt(sq[t + l]) - g[t + l]);
  for (; t < n; ++t) acc[0] = std::min(acc[0], std::sqrt(sq[t]) - g[t]);
  return *std::min_element(acc, acc + kLanes);
}

void sparse_times_dense(const std::uint64_t* indptr, const std::uint32_t* idx, const float* val,
                        std::size_t n_rows, const float* z, std::size_t q, float* acc,
                        float* negative, float* lanes) {
  float* dot_lanes = lanes;
  float* neg_lanes = lanes + kLanes * q;
  for (std::size_t r = 0; r < n_rows; ++r) {
    float* a = acc + r * q;
    float* b = negative ? negative + r * q : nullptr;
    std::fill(dot_lanes, dot_lanes + kLanes * q, 0.0f);
    std::fill(a, a + q, 0.0f);  // the tails until the end
    if (b) {
      std::fill(neg_lanes, neg_lanes + kLanes * q, 0.0f);
      std::fill(b, b + q, 0.0f);
    }
    const std::uint64_t first = indptr[r], h8 = (indptr[r + 1] - first) / kLanes * kLanes;
    for (std::uint64_t p = first; p < indptr[r + 1]; ++p) {
      const bool lane = p - first < h8;
      float* dot = lane ? dot_lanes + ((p - first) % kLanes) * q : a;
      const float x = val[p];
      const float* zr = z + std::size_t{idx[p]} * q;
      if (b) {
        float* neg = lane ? neg_lanes + ((p - first) % kLanes) * q : b;
        for (std::size_t j = 0; j < q; ++j) {
          neg[j] -= std::min(zr[j], 0.0f);
          dot[j] += x * std::max(zr[j], 0.0f);
        }
      } else {
        for (std::size_t j = 0; j < q; ++j) dot[j] += x * zr[j];
      }
    }
    for (std::size_t j = 0; j < q; ++j) {
      a[j] = combine_lanes(dot_lanes + j, q) + a[j];
      if (b) b[j] = combine_lanes(neg_lanes + j, q) + b[j];
    }
  }
}

}  // namespace

const Kernels& table() {
  static const Kernels k{
      .level = Simd::LCRWMD_SIMD_LEVEL,
      .sq_norm = sq_norm,
      .sq_dist = sq_dist,
      .sq_dist_batch = sq_dist_batch,
      .sq_dist_f64 = sq_dist_f64,
      .sparse_dot = sparse_dot,
      .sparse_dot_split = sparse_dot_split,
      .act1_dot = act1_dot,
      .act1_rows = act1_rows,
      .sqrt_to_f64 = ot::sqrt_to_f64,
      .sum_max_f64 = ot::sum_max_f64,
      .exp_neg_scaled = ot::exp_neg_scaled,
      .sinkhorn = ot::sinkhorn,
      .c_transformed_dual = ot::c_transformed_dual,
      .round_bf16 = phase1::round_bf16,
      .round_int8 = phase1::round_int8,
      .estimates = phase1::estimates,
      .estimates_s32 = phase1::estimates_s32,
      .bound_sq_distances = phase1::bound_sq_distances,
      .bound_columns = phase1::bound_columns,
      .int8_bound_strip = phase1::int8_bound_strip_kernel().run,
      .int8_bound_strip_isa = phase1::int8_bound_strip_kernel().isa,
      .upper_min_into = phase1::upper_min_into,
      .select_at_most = phase1::select_at_most,
      .columns_below = phase1::columns_below,
      .least_three_queries = phase1::least_three_queries,
      .keep_least = phase1::keep_least,
      .columns_to_rows = phase1::columns_to_rows,
      .gather_min = gather_min,
      .min_of = min_of,
      .min_dist_minus = min_dist_minus,
      .sparse_times_dense = sparse_times_dense,
  };
  return k;
}

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL
