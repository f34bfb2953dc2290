// The kernels of simd.h that only phase 1 uses (rounding, estimates and their intervals, the
// least three lower bounds, the cache's transpose), compiled per SIMD level as
// simd_kernels.cpp is, whose table lists them. The same rules hold: every level returns the
// scalar level's bits.
#include "cpu/simd_phase1_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1 {
namespace {

constexpr std::size_t kLanes = kSumLanes;

std::uint16_t bf16_of(float x) {
  if (!(std::fabs(x) >= std::numeric_limits<float>::min())) return 0;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

// The least three, and the names of the least two, of each row (simd.h: least_three_columns).
void least_three(Least3 t, const float* src, std::size_t n, std::uint32_t id) {
  std::size_t r = 0;
#if defined(__AVX512F__)
  // Sixteen rows at a time: half the instructions of eight (the pass that reads every entry of
  // every query's words).
  const __m512i id16 = _mm512_set1_epi32(static_cast<int>(id));
  for (; r + 16 <= n; r += 16) {
    const __m512 s = _mm512_loadu_ps(src + r), v1 = _mm512_loadu_ps(t.v1 + r),
                 v2 = _mm512_loadu_ps(t.v2 + r), v3 = _mm512_loadu_ps(t.v3 + r);
    const __m512i a1 = _mm512_loadu_si512(t.a1 + r), a2 = _mm512_loadu_si512(t.a2 + r);
    const __mmask16 c1 = _mm512_cmp_ps_mask(s, v1, _CMP_LT_OQ),
                    c2 = _mm512_cmp_ps_mask(s, v2, _CMP_LT_OQ),
                    c3 = _mm512_cmp_ps_mask(s, v3, _CMP_LT_OQ);
    _mm512_storeu_ps(t.v3 + r, _mm512_mask_blend_ps(c2, _mm512_mask_blend_ps(c3, v3, s), v2));
    _mm512_storeu_ps(t.v2 + r, _mm512_mask_blend_ps(c1, _mm512_mask_blend_ps(c2, v2, s), v1));
    _mm512_storeu_si512(t.a2 + r,
                        _mm512_mask_blend_epi32(c1, _mm512_mask_blend_epi32(c2, a2, id16), a1));
    _mm512_storeu_ps(t.v1 + r, _mm512_mask_blend_ps(c1, v1, s));
    _mm512_storeu_si512(t.a1 + r, _mm512_mask_blend_epi32(c1, a1, id16));
  }
#endif
#if defined(__AVX2__)
  const __m256 ids = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(id)));
  const auto load = [](const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); };
  const auto store = [](void* p, __m256 x) { _mm256_storeu_ps(static_cast<float*>(p), x); };
  for (; r + kLanes <= n; r += kLanes) {
    const __m256 s = _mm256_loadu_ps(src + r), v1 = load(t.v1 + r), v2 = load(t.v2 + r),
                 v3 = load(t.v3 + r), a1 = load(t.a1 + r), a2 = load(t.a2 + r);
    const __m256 c1 = _mm256_cmp_ps(s, v1, _CMP_LT_OQ), c2 = _mm256_cmp_ps(s, v2, _CMP_LT_OQ),
                 c3 = _mm256_cmp_ps(s, v3, _CMP_LT_OQ);
    store(t.v3 + r, _mm256_blendv_ps(_mm256_blendv_ps(v3, s, c3), v2, c2));
    store(t.v2 + r, _mm256_blendv_ps(_mm256_blendv_ps(v2, s, c2), v1, c1));
    store(t.a2 + r, _mm256_blendv_ps(_mm256_blendv_ps(a2, ids, c2), a1, c1));
    store(t.v1 + r, _mm256_blendv_ps(v1, s, c1));
    store(t.a1 + r, _mm256_blendv_ps(a1, ids, c1));
  }
#endif
  for (; r < n; ++r) {
    const float s = src[r];
    if (s < t.v1[r]) {
      t.v3[r] = t.v2[r];
      t.v2[r] = t.v1[r], t.a2[r] = t.a1[r];
      t.v1[r] = s, t.a1[r] = id;
    } else if (s < t.v2[r]) {
      t.v3[r] = t.v2[r];
      t.v2[r] = s, t.a2[r] = id;
    } else if (s < t.v3[r]) {
      t.v3[r] = s;
    }
  }
}

}  // namespace

void round_bf16(const float* x, std::size_t n, std::uint16_t* out) {
  std::size_t d = 0;
#if defined(__AVX2__)
  const __m256 tiny = _mm256_set1_ps(std::numeric_limits<float>::min());
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256i half = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
  for (; d + kLanes <= n; d += kLanes) {
    const __m256 v = _mm256_loadu_ps(x + d);
    const __m256 normal = _mm256_cmp_ps(_mm256_and_ps(v, magnitude), tiny, _CMP_GE_OQ);
    __m256i bits = _mm256_castps_si256(_mm256_and_ps(v, normal));  // else 0
    bits = _mm256_add_epi32(
        bits, _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(bits, 16), one)));
    bits = _mm256_srli_epi32(bits, 16);
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + d), packed);
  }
#endif
  for (; d < n; ++d) out[d] = bf16_of(x[d]);
}

void round_int8(const float* x, std::size_t n, float invert, std::int8_t* out) {
  std::size_t d = 0;
#if defined(__AVX2__)
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f),
               f = _mm256_set1_ps(invert);
  for (; d + kLanes <= n; d += kLanes) {
    // max and min return their second operand for NaN: -127, as below.
    const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(x + d), f), lo), hi);
    const __m256i q = _mm256_cvtps_epi32(y);  // to nearest even
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + d), _mm_packs_epi16(w, w));
  }
#endif
  for (; d < n; ++d) {
    const float y = x[d] * invert;
    float c = y > -127.0f ? y : -127.0f;
    c = c < 127.0f ? c : 127.0f;
    out[d] = static_cast<std::int8_t>(std::nearbyint(c));
  }
}

void estimates(const float* p, float col_sq, std::size_t n, float* g) {
  for (std::size_t r = 0; r < n; ++r) g[r] = col_sq - 2.0f * p[r];
}

void estimates_s32(const std::int32_t* sums, const float* row_scale, float col_scale, float col_sq,
                   std::size_t n, float* g) {
  for (std::size_t r = 0; r < n; ++r)
    g[r] = col_sq - 2.0f * (static_cast<float>(sums[r]) * (row_scale[r] * col_scale));
}

void bound_sq_distances(const float* g, BoundTermArrays rows, BoundTerms col, std::size_t n,
                        float* lo, float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float *sq = rows.sq, *a = rows.a, *b = rows.b, *c = rows.c;
  std::size_t r = 0;
#if defined(__AVX2__)
  // By hand (GCC 12 leaves the loop scalar), in the scalar loop's order; max and min return
  // their second operand for NaN, as the scalar comparisons do.
  const __m256 ca = _mm256_set1_ps(col.a), cb = _mm256_set1_ps(col.b), cc = _mm256_set1_ps(col.c),
               zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(kInf);
  for (; r + kLanes <= n; r += kLanes) {
    const __m256 estimate = _mm256_add_ps(_mm256_loadu_ps(sq + r), _mm256_loadu_ps(g + r));
    const __m256 beta =
        _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(a + r), ca),
                                                  _mm256_mul_ps(_mm256_loadu_ps(b + r), cb)),
                                    _mm256_loadu_ps(c + r)),
                      cc);
    _mm256_storeu_ps(lo + r, _mm256_max_ps(_mm256_sub_ps(estimate, beta), zero));
    if (hi) _mm256_storeu_ps(hi + r, _mm256_min_ps(_mm256_add_ps(estimate, beta), inf));
  }
#endif
  for (; r < n; ++r) {
    const float estimate = sq[r] + g[r];
    const float beta = a[r] * col.a + b[r] * col.b + c[r] + col.c;
    const float low = estimate - beta, high = estimate + beta;
    lo[r] = low > 0.0f ? low : 0.0f;            // NaN: 0
    if (hi) hi[r] = high < kInf ? high : kInf;  // NaN: +inf
  }
}

void upper_min_into(float* limit, const float* lo, BoundTerms row, BoundTermArrays cols,
                    std::size_t n) {
  const float *a = cols.a, *b = cols.b, *c = cols.c;
  for (std::size_t t = 0; t < n; ++t) {
    const float beta = row.a * a[t] + row.b * b[t] + row.c + c[t];
    limit[t] = std::min(limit[t], lo[t] + 2.0f * beta);
  }
}

std::size_t select_at_most(const float* lo, const float* limit, std::size_t n,
                           std::uint32_t* rows) {
  std::size_t found = 0, r = 0;
#if defined(__AVX512F__)
  const __m512i step = _mm512_set1_epi32(16);
  __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (; r + 16 <= n; r += 16) {
    const __mmask16 hit =
        _mm512_cmp_ps_mask(_mm512_loadu_ps(lo + r), _mm512_loadu_ps(limit + r), _CMP_LE_OQ);
    _mm512_mask_compressstoreu_epi32(rows + found, hit, index);
    found += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(hit)));
    index = _mm512_add_epi32(index, step);
  }
#elif defined(__AVX2__)
  for (; r + 8 <= n; r += 8) {
    auto hit = static_cast<unsigned>(_mm256_movemask_ps(
        _mm256_cmp_ps(_mm256_loadu_ps(lo + r), _mm256_loadu_ps(limit + r), _CMP_LE_OQ)));
    for (; hit; hit &= hit - 1)
      rows[found++] =
          static_cast<std::uint32_t>(r + static_cast<std::size_t>(std::countr_zero(hit)));
  }
#endif
  for (; r < n; ++r)
    if (lo[r] <= limit[r]) rows[found++] = static_cast<std::uint32_t>(r);
  return found;
}

void least_three_columns(Least3 t, const float* tile, std::size_t stride, std::size_t rows,
                         const std::uint32_t* cols, std::size_t n, std::uint32_t first_id) {
  for (std::size_t i = 0; i < n; ++i)
    least_three(t, tile + std::size_t{cols[i]} * stride, rows,
                first_id + static_cast<std::uint32_t>(i));
}

void columns_to_rows(const float* tile, std::size_t stride, std::size_t rows,
                     const std::uint32_t* cols, std::size_t n, float* dst, std::size_t dst_stride) {
  std::size_t p0 = 0;
#if defined(__AVX512F__)
  // Sixteen columns at a time, row after row: their cache lines are read once, in order, and
  // each row's sixteen values fill one line of the destination.
  const bool aligned = reinterpret_cast<std::uintptr_t>(dst) % 64 == 0 && dst_stride % 16 == 0;
  for (; p0 + 16 <= n; p0 += 16) {
    const __m512i base = _mm512_mullo_epi32(_mm512_loadu_si512(cols + p0),
                                            _mm512_set1_epi32(static_cast<int>(stride)));
    for (std::size_t r = 0; r < rows; ++r) {
      const __m512 v = _mm512_mask_i32gather_ps(
          _mm512_setzero_ps(), 0xFFFF,
          _mm512_add_epi32(base, _mm512_set1_epi32(static_cast<int>(r))), tile, 4);
      float* out = dst + r * dst_stride + p0;
      if (aligned)
        _mm512_stream_ps(out, v);
      else
        _mm512_storeu_ps(out, v);
    }
  }
  _mm_sfence();
#endif
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t p = p0; p < n; ++p)
      dst[r * dst_stride + p] = tile[std::size_t{cols[p]} * stride + r];
}

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1
