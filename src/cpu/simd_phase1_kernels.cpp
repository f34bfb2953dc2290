// The kernels of simd.h that only phase 1 uses to bound distances (rounding, estimates and their
// intervals, the candidates under a limit), compiled per SIMD level as simd_kernels.cpp is,
// whose table lists them (the least lower bounds: simd_least_kernels.cpp). The same rules hold:
// every level returns the scalar level's bits.
#include "cpu/simd_phase1_kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#if defined(__AVX2__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1 {
namespace {

#if defined(__AVX2__)
constexpr std::size_t kLanes = kSumLanes;  // the vector loops' width (none at the scalar level)
#endif

std::uint16_t bf16_of(float x) {
  if (!(std::fabs(x) >= std::numeric_limits<float>::min())) return 0;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
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

void bound_columns(const float* g, std::size_t g_ld, BoundTermArrays rows, std::size_t n,
                   const BoundTerms* cols, std::size_t nc, float* lo, std::size_t lo_ld) {
  // Columns far apart in memory (a strip of a tile): fetched well ahead, as the hardware does
  // not for this stride.
  constexpr std::size_t kAhead = 16;
#if defined(__AVX512F__)
  if (n <= 16) {
    // One register per column, the rows' terms held: bound_sq_distances' operations in its order.
    const __mmask16 m = lanes_below(n);
    const __m512 sq = _mm512_maskz_loadu_ps(m, rows.sq), a = _mm512_maskz_loadu_ps(m, rows.a),
                 b = _mm512_maskz_loadu_ps(m, rows.b), c3 = _mm512_maskz_loadu_ps(m, rows.c),
                 zero = _mm512_setzero_ps();
    for (std::size_t c = 0; c < nc; ++c) {
      if (c + kAhead < nc) __builtin_prefetch(g + (c + kAhead) * g_ld);
      const __m512 estimate = _mm512_add_ps(sq, _mm512_maskz_loadu_ps(m, g + c * g_ld));
      const __m512 beta =
          _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(a, _mm512_set1_ps(cols[c].a)),
                                                    _mm512_mul_ps(b, _mm512_set1_ps(cols[c].b))),
                                      c3),
                        _mm512_set1_ps(cols[c].c));
      _mm512_mask_storeu_ps(lo + c * lo_ld, m,
                            _mm512_maskz_max_ps(m, _mm512_sub_ps(estimate, beta), zero));
    }
    return;
  }
#endif
  for (std::size_t c = 0; c < nc; ++c) {
    if (c + kAhead < nc)
      for (std::size_t b = 0; b < n * sizeof(float); b += 64)
        __builtin_prefetch(reinterpret_cast<const char*>(g + (c + kAhead) * g_ld) + b);
    bound_sq_distances(g + c * g_ld, rows, cols[c], n, lo + c * lo_ld, nullptr);
  }
}

#if defined(__AVX2__)
namespace {

// A strip's rows as a VNNI kernel reads them, `block` rows at a time (n <= 16): in place where n
// is a whole number of blocks, else their bytes copied with zeros up to the next block, so that
// nothing is read past the rows, and the terms of sixteen rows (past n: zeros, never stored).
// A whole strip costs no copy (measured: the terms' six copies were 4% of a typed query).
class BlockedRows {
 public:
  BlockedRows(const Int8Rows& rows, std::size_t n, std::size_t kp, std::size_t block)
      : rows_(&rows) {
    if (n % block == 0) return;
    for (float* terms : {scale_, sq_, a_, b_, c_}) std::fill_n(terms, 16, 0.0f);
    std::fill_n(bias_, 16, 0);
    for (std::size_t r = 0; r < n; ++r) {
      bias_[r] = rows.bias[r], scale_[r] = rows.scale[r];
      sq_[r] = rows.terms.sq[r], a_[r] = rows.terms.a[r], b_[r] = rows.terms.b[r];
      c_[r] = rows.terms.c[r];
    }
    thread_local std::vector<std::int8_t> padded;
    padded.assign((n + block - 1) / block * block * kp, 0);
    std::memcpy(padded.data(), rows.q, n * kp);
    copy_ = {padded.data(), bias_, scale_, {sq_, a_, b_, c_}};
    rows_ = &copy_;
  }
  const Int8Rows& rows() const { return *rows_; }

 private:
  // The caller's rows themselves, not a copy: the caller has just stored their pointers one at
  // a time, and a copy read them back wider than stored, which waits until every store before
  // them has reached the cache (the strip before's cache rows: 9% of a Set 1 typed query).
  const Int8Rows* rows_;
  // Filled only where the rows are copied: a whole strip (most calls) costs nothing here.
  Int8Rows copy_{};
  std::int32_t bias_[16];
  float scale_[16], sq_[16], a_[16], b_[16], c_[16];
};

}  // namespace
#endif

#if defined(__AVX512F__)
namespace {

using Aliased32 = std::int32_t __attribute__((may_alias));

// acc += b's bytes (unsigned) times the four bytes at `four` (signed) in every lane, four
// products a lane: VPDPBUSD with its memory operand broadcast, written out because GCC 12
// neither folds the broadcast nor keeps the accumulators in place (it copied each one every step).
__attribute__((target("avx512vnni"), always_inline)) inline void dot4_broadcast(
    __m512i& acc, __m512i b, const std::int8_t* four) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(b), "m"(*reinterpret_cast<const Aliased32*>(four)));
}

// One side's terms for sixteen lanes of bounds: its words' (a register each) or one word's in
// every lane.
struct BoundLanes {
  __m512 scale, sq, a, b, c;
};

// Sixteen lanes of int8 lower bounds from their exact integer products `sum`, less the bias and
// scaled as estimates_s32 does, then bounded as bound_columns does, in their order of
// operations (max returns its second operand for NaN: 0, as there): what both kernels below
// compute, whichever side lies in the lanes.
__attribute__((target("avx512vnni"), always_inline)) inline __m512 int8_bounds(
    __m512i sum, __m512i bias, const BoundLanes& row, const BoundLanes& col) {
  // The masked forms of max and the conversion, all lanes on: GCC 12 warns of the plain ones'
  // undefined pass-through.
  constexpr __mmask16 all = 0xFFFF;
  const __m512 p = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, _mm512_sub_epi32(sum, bias)),
                                 _mm512_mul_ps(row.scale, col.scale));
  const __m512 g = _mm512_sub_ps(col.sq, _mm512_mul_ps(_mm512_set1_ps(2.0f), p));
  const __m512 estimate = _mm512_add_ps(row.sq, g);
  const __m512 beta = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(row.a, col.a), _mm512_mul_ps(row.b, col.b)), row.c),
      col.c);
  return _mm512_maskz_max_ps(all, _mm512_sub_ps(estimate, beta), _mm512_setzero_ps());
}

// int8_bound_strip for sixteen rows (row: sixteen words of kp bytes and their terms, sixteen
// each), kp a multiple of 64 known when compiled where KP > 0. Sixteen columns at a time, a
// register each row: every group of four bytes is one load of the columns' block and, per row,
// one VPDPBUSD with the row's four bytes broadcast from memory, so the sums never leave the
// registers; then each row's sums are bounded as estimates_s32 and bound_columns do, in their
// order of operations, and the 16 x 16 block is transposed to a register a column.
template <std::size_t KP>
__attribute__((target("avx512vnni"))) void int8_strip16(const Int8Rows& row, std::size_t n,
                                                        std::size_t kp_given,
                                                        const Int8Columns& cols, std::size_t nc,
                                                        float* lo, std::size_t lo_ld) {
  const std::size_t kp = KP > 0 ? KP : kp_given;
  const std::int8_t* q = row.q;
  const __mmask16 rows_in = lanes_below(n);
  for (std::size_t c0 = 0; c0 < nc; c0 += 16) {
    const __mmask16 in = lanes_below(nc - c0);
    const std::uint8_t* block = cols.blocks + c0 * kp;
    // Unrolled, so that the accumulators live in registers.
    __m512i acc[16];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < 16; ++r) acc[r] = _mm512_setzero_si512();
    for (std::size_t g = 0; g < kp / 4; ++g) {
      // The rows of the strip after next (16 kp bytes, kp / 4 lines: one a group) on their way.
      _mm_prefetch(reinterpret_cast<const char*>(q + 32 * kp + 64 * g), _MM_HINT_T0);
      const __m512i b = _mm512_loadu_si512(block + 64 * g);
#pragma GCC unroll 16
      for (std::size_t r = 0; r < 16; ++r) dot4_broadcast(acc[r], b, q + r * kp + 4 * g);
    }
    const BoundLanes columns{
        _mm512_maskz_loadu_ps(in, cols.scale + c0), _mm512_maskz_loadu_ps(in, cols.sq + c0),
        _mm512_maskz_loadu_ps(in, cols.terms.a + c0), _mm512_maskz_loadu_ps(in, cols.terms.b + c0),
        _mm512_maskz_loadu_ps(in, cols.terms.c + c0)};
    __m512 x[16];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < 16; ++r)
      x[r] = int8_bounds(acc[r], _mm512_set1_epi32(row.bias[r]),
                         {_mm512_set1_ps(row.scale[r]), _mm512_set1_ps(row.terms.sq[r]),
                          _mm512_set1_ps(row.terms.a[r]), _mm512_set1_ps(row.terms.b[r]),
                          _mm512_set1_ps(row.terms.c[r])},
                         columns);
    transpose16(x);
    for (std::size_t c = 0; c < 16 && c0 + c < nc; ++c)
      _mm512_mask_storeu_ps(lo + (c0 + c) * lo_ld, rows_in, x[c]);
  }
}

// acc += b's bytes (unsigned) times a's (signed), four products a lane (VPDPBUSD, written out
// for dot4_broadcast's reason).
__attribute__((target("avx512vnni"), always_inline)) inline void dot4(__m512i& acc, __m512i b,
                                                                      __m512i a) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(a));
}

// int8_bound_strip for one part of the columns' narrow layout (simd.h): its 16 / G columns from
// c0 on, G lanes each, where int8_strip16 spends sixteen lanes on every column of a block
// however few it holds: a typed query's few words cost their number of products, not sixteen's.
// Each row's register sums, lane j + G c, column c's group s G + j over the steps s: one load of
// the part's step and, per row, the row's G groups of four bytes broadcast to every column's
// lanes. Then the sixteen registers are transposed, which puts the rows in lanes, each column's
// G registers added (exact integers: the sums int8_strip16 makes), and bounded as there, in its
// order of operations.
template <std::size_t G, std::size_t KP>
__attribute__((target("avx512vnni"))) void int8_strip16_narrow(
    const Int8Rows& row, std::size_t n, std::size_t kp_given, const std::uint8_t* part,
    const Int8Columns& cols, std::size_t c0, float* lo, std::size_t lo_ld) {
  const std::size_t kp = KP > 0 ? KP : kp_given;
  constexpr std::size_t kStep = 4 * G;  // a row's bytes a step reads
  const std::int8_t* q = row.q;
  // The masked broadcasts, all lanes on (int8_bounds' reason).
  constexpr __mmask16 all = 0xFFFF;
  constexpr __mmask8 all8 = 0xFF;
  __m512i acc[16];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < 16; ++r) acc[r] = _mm512_setzero_si512();
  for (std::size_t s = 0; s < kp / kStep; ++s) {
    // The rows of the strip after next on their way, as int8_strip16 fetches them.
#pragma GCC unroll 16
    for (std::size_t i = 0; i < G; ++i)
      _mm_prefetch(reinterpret_cast<const char*>(q + 32 * kp + 64 * (s * G + i)), _MM_HINT_T0);
    const __m512i b = _mm512_loadu_si512(part + 64 * s);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < 16; ++r) {
      const std::int8_t* a = q + r * kp + kStep * s;
      __m512i x;
      if constexpr (G == 16) {
        x = _mm512_loadu_si512(a);
      } else if constexpr (G == 8) {
        x = _mm512_maskz_broadcast_i64x4(all8,
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)));
      } else if constexpr (G == 4) {
        x = _mm512_maskz_broadcast_i32x4(all, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
      } else {
        static_assert(G == 2);
        std::int64_t eight;
        std::memcpy(&eight, a, 8);
        x = _mm512_set1_epi64(eight);
      }
      dot4(acc[r], b, x);
    }
  }
  __m512 t[16];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < 16; ++r) t[r] = _mm512_castsi512_ps(acc[r]);
  transpose16(t);  // t[l]: lane l of every row
  const __mmask16 rows_in = lanes_below(n);
  // The rows' terms (sixteen each: BlockedRows').
  const __m512i bias = _mm512_loadu_si512(row.bias);
  const BoundLanes rows{_mm512_loadu_ps(row.scale), _mm512_loadu_ps(row.terms.sq),
                        _mm512_loadu_ps(row.terms.a), _mm512_loadu_ps(row.terms.b),
                        _mm512_loadu_ps(row.terms.c)};
  for (std::size_t c = 0; c < 16 / G; ++c) {
    const std::size_t col = c0 + c;
    __m512i sum = _mm512_castps_si512(t[G * c]);
    for (std::size_t j = 1; j < G; ++j)
      sum = _mm512_add_epi32(sum, _mm512_castps_si512(t[G * c + j]));
    const __m512 x =
        int8_bounds(sum, bias, rows,
                    {_mm512_set1_ps(cols.scale[col]), _mm512_set1_ps(cols.sq[col]),
                     _mm512_set1_ps(cols.terms.a[col]), _mm512_set1_ps(cols.terms.b[col]),
                     _mm512_set1_ps(cols.terms.c[col])});
    _mm512_mask_storeu_ps(lo + col * lo_ld, rows_in, x);
  }
}

// The kernels for each usual dimension (kp / 64 < kFixedDims; entry 0 takes kp at run time):
// int8_strip16's, and int8_strip16_narrow's for G lanes a column.
constexpr std::size_t kFixedDims = 7;
using Strip16 = void (*)(const Int8Rows&, std::size_t, std::size_t, const Int8Columns&, std::size_t,
                         float*, std::size_t);
using Part = void (*)(const Int8Rows&, std::size_t, std::size_t, const std::uint8_t*,
                      const Int8Columns&, std::size_t, float*, std::size_t);
template <std::size_t... D>
constexpr std::array<Strip16, sizeof...(D)> strip16_of(std::index_sequence<D...>) {
  return {int8_strip16<64 * D>...};
}
template <std::size_t G, std::size_t... D>
constexpr std::array<Part, sizeof...(D)> parts_of(std::index_sequence<D...>) {
  return {int8_strip16_narrow<G, 64 * D>...};
}

// The rows in blocks of sixteen (BlockedRows), then the kernels for their dimension: the
// columns' whole blocks of sixteen, then the parts of the rest where their narrow layout is
// there.
__attribute__((target("avx512vnni"))) void int8_bound_strip(const Int8Rows& rows, std::size_t n,
                                                            std::size_t kp, const Int8Columns& cols,
                                                            std::size_t nc, float* lo,
                                                            std::size_t lo_ld) {
  if (n == 0 || nc == 0) return;
  const BlockedRows blocked(rows, n, kp, 16);
  // The usual dimensions, padded (100 -> 128, 300 -> 320), with their byte offsets fixed, by
  // kp / 64; entry 0 takes kp at run time. The parts by their columns: 8, 4, 2, 1.
  constexpr auto dims = std::make_index_sequence<kFixedDims>();
  constexpr std::array<Strip16, kFixedDims> kStrips = strip16_of(dims);
  constexpr std::array<std::array<Part, kFixedDims>, 4> kParts = {
      parts_of<2>(dims), parts_of<4>(dims), parts_of<8>(dims), parts_of<16>(dims)};
  const std::size_t fixed = kp / 64 < kFixedDims ? kp / 64 : 0;
  if (cols.narrow == nullptr) return kStrips[fixed](blocked.rows(), n, kp, cols, nc, lo, lo_ld);
  const std::size_t whole = nc / 16 * 16;
  if (whole > 0) kStrips[fixed](blocked.rows(), n, kp, cols, whole, lo, lo_ld);
  const std::uint8_t* part = cols.narrow;
  for (std::size_t c0 = whole; c0 < nc;) {
    const std::size_t width = std::bit_floor(nc - c0);  // the part's columns
    kParts[3 - std::countr_zero(width)][fixed](blocked.rows(), n, kp, part, cols, c0, lo, lo_ld);
    part += width * kp;
    c0 += width;
  }
}

}  // namespace
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
namespace {

// AVX-VNNI: CPUID leaf 7, subleaf 1, EAX bit 4 (asked directly: not every compiler's
// __builtin_cpu_supports knows it). The OS keeps 256-bit state, as this level needs anyway.
bool has_avx_vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
}

// acc += b's bytes (unsigned) times a's (signed), four products a lane: VPDPBUSD on 256 bits,
// VEX-encoded (AVX-VNNI) or EVEX-encoded (AVX512-VNNI with AVX512VL: the same instruction where
// the level is capped below the CPU's AVX-512), written out so that this level's flags compile it.
template <bool kEvex>
__attribute__((always_inline)) inline void dot4(__m256i& acc, __m256i b, __m256i a) {
  if constexpr (kEvex)
    asm("%{evex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(b), "x"(a));
  else
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(b), "x"(a));
}

// Vocabulary rows int8_strip_256 takes at a time (their accumulators and the two column
// registers fill the sixteen vector registers).
constexpr std::size_t kRows = 4;

// int8_bound_strip on 256 bits: each sixteen-column block of the batch's words (two registers
// of eight) against four rows at a time, eight accumulators in registers over every group of
// four bytes; then each row's sums are bounded as estimates_s32 and bound_columns do, in their
// order of operations, and the block written a column at a time.
template <bool kEvex>
void int8_strip_256(const Int8Rows& rows, std::size_t n, std::size_t kp, const Int8Columns& cols,
                    std::size_t nc, float* lo, std::size_t lo_ld) {
  const __m256 zero = _mm256_setzero_ps(), two = _mm256_set1_ps(2.0f);
  alignas(32) float x[16][16];  // [row][column] of one block
  for (std::size_t c0 = 0; c0 < nc; c0 += 16) {
    const std::uint8_t* block = cols.blocks + c0 * kp;
    // The columns' terms, zeros past the last (never stored).
    alignas(32) float scale[16] = {}, sq[16] = {}, ca[16] = {}, cb[16] = {}, cc[16] = {};
    for (std::size_t c = 0; c < 16 && c0 + c < nc; ++c) {
      scale[c] = cols.scale[c0 + c], sq[c] = cols.sq[c0 + c];
      ca[c] = cols.terms.a[c0 + c], cb[c] = cols.terms.b[c0 + c], cc[c] = cols.terms.c[c0 + c];
    }
    for (std::size_t r0 = 0; r0 < n; r0 += kRows) {
      __m256i acc[kRows][2];
#pragma GCC unroll 4
      for (std::size_t r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
      const std::int8_t* q = rows.q + r0 * kp;
      for (std::size_t g = 0; g < kp / 4; ++g) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * g));
        const __m256i b1 =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * g + 32));
#pragma GCC unroll 4
        for (std::size_t r = 0; r < kRows; ++r) {
          std::int32_t four;
          std::memcpy(&four, q + r * kp + 4 * g, 4);
          const __m256i a = _mm256_set1_epi32(four);
          dot4<kEvex>(acc[r][0], b0, a);
          dot4<kEvex>(acc[r][1], b1, a);
        }
      }
      for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t h = 0; h < 2; ++h) {
          const std::size_t u = r0 + r;
          const __m256 cs = _mm256_load_ps(scale + 8 * h), csq = _mm256_load_ps(sq + 8 * h);
          // The exact product less the columns' bias, scaled: estimates_s32's g.
          const __m256i sum = _mm256_sub_epi32(acc[r][h], _mm256_set1_epi32(rows.bias[u]));
          const __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(sum),
                                         _mm256_mul_ps(_mm256_set1_ps(rows.scale[u]), cs));
          const __m256 g = _mm256_sub_ps(csq, _mm256_mul_ps(two, p));
          // bound_columns': max returns its second operand for NaN (0, as there).
          const __m256 estimate = _mm256_add_ps(_mm256_set1_ps(rows.terms.sq[u]), g);
          const __m256 beta = _mm256_add_ps(
              _mm256_add_ps(
                  _mm256_add_ps(
                      _mm256_mul_ps(_mm256_set1_ps(rows.terms.a[u]), _mm256_load_ps(ca + 8 * h)),
                      _mm256_mul_ps(_mm256_set1_ps(rows.terms.b[u]), _mm256_load_ps(cb + 8 * h))),
                  _mm256_set1_ps(rows.terms.c[u])),
              _mm256_load_ps(cc + 8 * h));
          _mm256_store_ps(x[r0 + r] + 8 * h, _mm256_max_ps(_mm256_sub_ps(estimate, beta), zero));
        }
    }
    for (std::size_t c = 0; c < 16 && c0 + c < nc; ++c)
      for (std::size_t r = 0; r < n; ++r) lo[(c0 + c) * lo_ld + r] = x[r][c];
  }
}

// The rows in blocks of kRows (BlockedRows), as int8_strip_256 takes them.
template <bool kEvex>
void int8_bound_strip_256(const Int8Rows& rows, std::size_t n, std::size_t kp,
                          const Int8Columns& cols, std::size_t nc, float* lo, std::size_t lo_ld) {
  if (n == 0 || nc == 0) return;
  int8_strip_256<kEvex>(BlockedRows(rows, n, kp, kRows).rows(), n, kp, cols, nc, lo, lo_ld);
}

}  // namespace
#endif

Int8StripKernel int8_bound_strip_kernel() {
#if defined(__AVX512F__)
  if (__builtin_cpu_supports("avx512vnni")) return {int8_bound_strip, "avx512-vnni"};
#elif defined(__AVX2__)
  if (has_avx_vnni()) return {int8_bound_strip_256<false>, "avx-vnni"};
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl"))
    return {int8_bound_strip_256<true>, "256-bit avx512-vnni"};
#endif
  return {nullptr, nullptr};
}

std::size_t columns_below(const float* tile, std::size_t stride, std::size_t rows,
                          const float* limit, std::size_t n, std::uint32_t* cols) {
  std::size_t found = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const float* x = tile + c * stride;
    bool below = false;
    std::size_t r = 0;
#if defined(__AVX512F__)
    const __m512 l = _mm512_set1_ps(limit[c]);
    __mmask16 hit = 0;
    for (; r + 16 <= rows; r += 16)
      hit |= _mm512_cmp_ps_mask(_mm512_loadu_ps(x + r), l, _CMP_LT_OQ);
    if (r < rows) {  // the tail masked: nothing past the column is read
      const auto tail = static_cast<__mmask16>((1u << (rows - r)) - 1);
      hit |= _mm512_mask_cmp_ps_mask(tail, _mm512_maskz_loadu_ps(tail, x + r), l, _CMP_LT_OQ);
      r = rows;
    }
    below = hit != 0;
#elif defined(__AVX2__)
    const __m256 l = _mm256_set1_ps(limit[c]);
    __m256 hit = _mm256_setzero_ps();
    for (; r + 8 <= rows; r += 8)
      hit = _mm256_or_ps(hit, _mm256_cmp_ps(_mm256_loadu_ps(x + r), l, _CMP_LT_OQ));
    below = _mm256_movemask_ps(hit) != 0;
#endif
    for (; r < rows && !below; ++r) below = x[r] < limit[c];
    if (below) cols[found++] = static_cast<std::uint32_t>(c);
  }
  return found;
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

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1
