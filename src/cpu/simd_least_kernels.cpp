// The kernels of simd.h that keep phase 1's least lower bounds (each query's least three over
// a strip of rows, what a top-k keeps of them), the word-distance cache's transpose, and the
// least over a document's words of the cache's rows (D2),
// compiled per SIMD level as simd_kernels.cpp is, whose table lists them. The same rules hold:
// every level returns the scalar level's bits.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "cpu/simd_phase1_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL::phase1 {
namespace {

// One row's least three values and the positions of its least two (simd.h:
// least_three_queries), the scalar rule every level follows.
struct Row3 {
  float v1, v2, v3;
  std::uint32_t a1, a2;
  void see(float s, std::uint32_t id) {
    if (s < v1) {
      v3 = v2;
      v2 = v1, a2 = a1;
      v1 = s, a1 = id;
    } else if (s < v2) {
      v3 = v2;
      v2 = s, a2 = id;
    } else if (s < v3) {
      v3 = s;
    }
  }
};

#if defined(__AVX512F__)
// Sixteen rows of one query, held in registers through all of the query's columns.
struct Lanes16 {
  __m512 v1, v2, v3;
  __m512i a1, a2;
  void see(__m512 s, __m512i id) {
    const __mmask16 c1 = _mm512_cmp_ps_mask(s, v1, _CMP_LT_OQ),
                    c2 = _mm512_cmp_ps_mask(s, v2, _CMP_LT_OQ),
                    c3 = _mm512_cmp_ps_mask(s, v3, _CMP_LT_OQ);
    v3 = _mm512_mask_blend_ps(c2, _mm512_mask_blend_ps(c3, v3, s), v2);
    a2 = _mm512_mask_blend_epi32(c1, _mm512_mask_blend_epi32(c2, a2, id), a1);
    v2 = _mm512_mask_blend_ps(c1, _mm512_mask_blend_ps(c2, v2, s), v1);
    v1 = _mm512_mask_blend_ps(c1, v1, s);
    a1 = _mm512_mask_blend_epi32(c1, a1, id);
  }
  void store(Least3 t, std::size_t at, __mmask16 m) const {
    _mm512_mask_storeu_ps(t.v1 + at, m, v1);
    _mm512_mask_storeu_ps(t.v2 + at, m, v2);
    _mm512_mask_storeu_ps(t.v3 + at, m, v3);
    _mm512_mask_storeu_epi32(t.a1 + at, m, a1);
    _mm512_mask_storeu_epi32(t.a2 + at, m, a2);
  }
};

// Rows [r0, r0 + 16 * S) (the lanes past `rows` masked) of every query. Each query's columns
// are read as whole lines, 16 S rows of one column at a time, while its state stays in
// registers; S = 2 reads the pairs of lines the L2 prefetcher fetches together. A query's
// columns are split into kChains consecutive runs, each with state of its own (one chain's
// compare-and-blend latency, not the CPU's throughput, bounded the loop), then merged in order:
// a later run's least three fed to the state of the runs before it, least first, give that
// state's values and positions as one pass over them all would (strict < keeps the earlier
// position on ties, and a later run's third value can only become the third).
constexpr std::size_t kChains = 3;

template <std::size_t S>
void least_three_strips(Least3 t, std::size_t ld, const float* tile, std::size_t stride,
                        std::size_t r0, std::size_t rows, const std::uint32_t* cols,
                        const std::uint64_t* indptr, std::size_t nq) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __mmask16 mask[S];
  for (std::size_t s = 0; s < S; ++s)
    mask[s] = lanes_below(rows > r0 + 16 * s ? rows - r0 - 16 * s : 0);
  for (std::size_t j = 0; j < nq; ++j) {
    const std::uint64_t first = indptr[j], last = indptr[j + 1];
    const std::uint64_t run = (last - first) / kChains;  // the last chain also takes the rest
    const __m512i id0 = _mm512_set1_epi32(static_cast<int>(first));
    static_assert(kChains == 3);  // three named states: an array of them was kept in memory
    Lanes16 l0[S], l1[S], l2[S];
    for (std::size_t s = 0; s < S; ++s) l0[s] = l1[s] = l2[s] = {inf, inf, inf, id0, id0};
    const auto see = [&](Lanes16(&l)[S], std::uint64_t p) __attribute__((always_inline)) {
      const float* col = tile + std::size_t{cols[p]} * stride + r0;
      const __m512i id = _mm512_set1_epi32(static_cast<int>(p));
      for (std::size_t s = 0; s < S; ++s)
        l[s].see(_mm512_maskz_loadu_ps(mask[s], col + 16 * s), id);
    };
    for (std::uint64_t p = first; p < first + run; ++p) {
      see(l0, p);
      see(l1, p + run);
      see(l2, p + 2 * run);
    }
    for (std::uint64_t p = first + kChains * run; p < last; ++p) see(l2, p);
    for (std::size_t s = 0; s < S; ++s)
      for (const Lanes16& later : {l1[s], l2[s]}) {
        l0[s].see(later.v1, later.a1);
        l0[s].see(later.v2, later.a2);
        l0[s].see(later.v3, later.a2);  // lands third at most: its position unused
      }
    for (std::size_t s = 0; s < S; ++s) l0[s].store(t, j * ld + r0 + 16 * s, mask[s]);
  }
}

static_assert(sizeof(KeptLeast) == 12, "three 32-bit words, written as such below");

// Where each 32-bit word of 16 interleaved {v2, v3, positions} entries (48 words, three
// registers) comes from: `pair` indexes the concatenation v2 | v3, `third` the positions, in the
// lanes of `mask`.
struct Interleave3 {
  std::int32_t pair[3][16], third[3][16];
  __mmask16 mask[3];
};
constexpr Interleave3 make_interleave3() {
  Interleave3 t{};
  for (int o = 0; o < 3; ++o)
    for (int l = 0; l < 16; ++l) {
      const int i = 16 * o + l, k = i / 3, f = i % 3;
      t.pair[o][l] = f == 0 ? k : f == 1 ? 16 + k : 0;
      t.third[o][l] = k;
      if (f == 2) t.mask[o] = static_cast<__mmask16>(t.mask[o] | (1u << l));
    }
  return t;
}
constexpr Interleave3 kInterleave3 = make_interleave3();

// keep_least for rows [r0, r0 + 16) of queries [j0, j0 + 16): each quantity loaded a register a
// query, transposed to a register a row, and written a row at a time.
// (The masked forms, all lanes on, where GCC 12 warns of the plain ones' undefined pass-through.)
void keep_least16(Least3 t, std::size_t ld, std::size_t r0, std::size_t j0,
                  const std::uint64_t* first, float* z, KeptLeast* kept, std::size_t z_ld) {
  // One of the state's arrays, a register a row of the block.
  const auto rows_of = [&](const float* state, __m512 x[16]) {
    for (std::size_t i = 0; i < 16; ++i) x[i] = _mm512_loadu_ps(state + (j0 + i) * ld + r0);
    transpose16(x);
  };
  __m512 x[16], v2[16], v3[16];
  rows_of(t.v1, x);
  for (std::size_t r = 0; r < 16; ++r)
    _mm512_storeu_ps(z + (r0 + r) * z_ld + j0, _mm512_maskz_sqrt_ps(0xFFFF, x[r]));
  rows_of(t.v2, v2);
  rows_of(t.v3, v3);
  const __m512i low16 = _mm512_set1_epi32(0xFFFF);
  for (std::size_t i = 0; i < 16; ++i) {
    const __m512i f = _mm512_set1_epi32(static_cast<int>(first[j0 + i]));
    const std::size_t e = (j0 + i) * ld + r0;
    const __m512i a1 = _mm512_sub_epi32(_mm512_loadu_si512(t.a1 + e), f),
                  a2 = _mm512_sub_epi32(_mm512_loadu_si512(t.a2 + e), f);
    x[i] = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_and_si512(a1, low16), _mm512_maskz_slli_epi32(0xFFFF, a2, 16)));
  }
  transpose16(x);
  for (std::size_t r = 0; r < 16; ++r) {
    float* out = reinterpret_cast<float*>(kept + (r0 + r) * z_ld + j0);
    for (std::size_t o = 0; o < 3; ++o) {
      const __m512 pair =
          _mm512_permutex2var_ps(v2[r], _mm512_loadu_si512(kInterleave3.pair[o]), v3[r]);
      _mm512_storeu_ps(out + 16 * o,
                       _mm512_mask_permutexvar_ps(pair, kInterleave3.mask[o],
                                                  _mm512_loadu_si512(kInterleave3.third[o]), x[r]));
    }
  }
}
#elif defined(__AVX2__)
// Eight rows of one query in registers, as Lanes16 (the ids kept as float bits for blendv).
struct Lanes8 {
  __m256 v1, v2, v3, a1, a2;
  void see(__m256 s, __m256 id) {
    const __m256 c1 = _mm256_cmp_ps(s, v1, _CMP_LT_OQ), c2 = _mm256_cmp_ps(s, v2, _CMP_LT_OQ),
                 c3 = _mm256_cmp_ps(s, v3, _CMP_LT_OQ);
    v3 = _mm256_blendv_ps(_mm256_blendv_ps(v3, s, c3), v2, c2);
    a2 = _mm256_blendv_ps(_mm256_blendv_ps(a2, id, c2), a1, c1);
    v2 = _mm256_blendv_ps(_mm256_blendv_ps(v2, s, c2), v1, c1);
    v1 = _mm256_blendv_ps(v1, s, c1);
    a1 = _mm256_blendv_ps(a1, id, c1);
  }
};
#endif

// keep_least's rule for rows [r_begin, r_end) of queries [j_begin, j_end), sixteen rows at a
// time (their rows of z and kept stay in the caches).
void keep_rows(Least3 t, std::size_t ld, std::size_t r_begin, std::size_t r_end,
               std::size_t j_begin, std::size_t j_end, const std::uint64_t* first, float* z,
               KeptLeast* kept, std::size_t z_ld) {
  for (std::size_t r0 = r_begin; r0 < r_end; r0 += 16)
    for (std::size_t j = j_begin; j < j_end; ++j)
      for (std::size_t r = r0; r < std::min(r_end, r0 + 16); ++r) {
        const std::size_t e = j * ld + r, at = r * z_ld + j;
        z[at] = std::sqrt(t.v1[e]);
        kept[at] = {t.v2[e], t.v3[e], static_cast<std::uint16_t>(t.a1[e] - first[j]),
                    static_cast<std::uint16_t>(t.a2[e] - first[j])};
      }
}

}  // namespace

void least_three_queries(Least3 t, std::size_t ld, const float* tile, std::size_t stride,
                         std::size_t rows, const std::uint32_t* cols, const std::uint64_t* indptr,
                         std::size_t nq) {
  std::size_t r0 = 0;
#if defined(__AVX512F__)
  for (; r0 + 16 < rows; r0 += 32)
    least_three_strips<2>(t, ld, tile, stride, r0, rows, cols, indptr, nq);
  for (; r0 < rows; r0 += 16)
    least_three_strips<1>(t, ld, tile, stride, r0, rows, cols, indptr, nq);
#elif defined(__AVX2__)
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const auto as_float = [](std::uint64_t p) {
    return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(p)));
  };
  for (; r0 + 8 <= rows; r0 += 8)
    for (std::size_t j = 0; j < nq; ++j) {
      const std::uint64_t first = indptr[j], last = indptr[j + 1];
      Lanes8 l{inf, inf, inf, as_float(first), as_float(first)};
      for (std::uint64_t p = first; p < last; ++p)
        l.see(_mm256_loadu_ps(tile + std::size_t{cols[p]} * stride + r0), as_float(p));
      const std::size_t e = j * ld + r0;
      _mm256_storeu_ps(t.v1 + e, l.v1);
      _mm256_storeu_ps(t.v2 + e, l.v2);
      _mm256_storeu_ps(t.v3 + e, l.v3);
      _mm256_storeu_ps(reinterpret_cast<float*>(t.a1 + e), l.a1);
      _mm256_storeu_ps(reinterpret_cast<float*>(t.a2 + e), l.a2);
    }
#endif
  for (std::size_t j = 0; j < nq; ++j) {
    const std::uint64_t first = indptr[j], last = indptr[j + 1];
    for (std::size_t r = r0; r < rows; ++r) {
      constexpr float kInf = std::numeric_limits<float>::infinity();
      const auto id0 = static_cast<std::uint32_t>(first);
      Row3 x{kInf, kInf, kInf, id0, id0};
      for (std::uint64_t p = first; p < last; ++p)
        x.see(tile[std::size_t{cols[p]} * stride + r], static_cast<std::uint32_t>(p));
      const std::size_t e = j * ld + r;
      t.v1[e] = x.v1, t.v2[e] = x.v2, t.v3[e] = x.v3, t.a1[e] = x.a1, t.a2[e] = x.a2;
    }
  }
}

void keep_least(Least3 t, std::size_t ld, std::size_t rows, std::size_t nq,
                const std::uint64_t* first, float* z, KeptLeast* kept, std::size_t z_ld) {
  std::size_t r0 = 0;
#if defined(__AVX512F__)
  for (; r0 + 16 <= rows; r0 += 16) {
    std::size_t j0 = 0;
    for (; j0 + 16 <= nq; j0 += 16) keep_least16(t, ld, r0, j0, first, z, kept, z_ld);
    keep_rows(t, ld, r0, r0 + 16, j0, nq, first, z, kept, z_ld);
  }
#endif
  keep_rows(t, ld, r0, rows, 0, nq, first, z, kept, z_ld);
}

void columns_to_rows(const float* tile, std::size_t stride, std::size_t rows,
                     const std::uint32_t* cols, std::size_t n, float* dst, std::size_t dst_stride) {
  std::size_t p0 = 0;
#if defined(__AVX512F__)
  // Sixteen columns at a time, row after row: their cache lines are read once, in order, and
  // each row's sixteen values fill one line of the destination.
  const bool aligned = reinterpret_cast<std::uintptr_t>(dst) % 64 == 0 && dst_stride % 16 == 0;
  if (stride == 16 && rows == 16) {
    // A strip of sixteen rows: sixteen columns are sixteen registers, transposed in place; the
    // last columns, fewer than sixteen (all of a typed query's), the same way with the absent
    // ones zero and each row's present lanes stored.
    for (; p0 < n; p0 += 16) {
      const std::size_t present = std::min<std::size_t>(16, n - p0);
      __m512 x[16];
      for (std::size_t i = 0; i < 16; ++i)
        x[i] = i < present ? _mm512_loadu_ps(tile + std::size_t{cols[p0 + i]} * 16)
                           : _mm512_setzero_ps();
      transpose16(x);
      const auto lanes = static_cast<__mmask16>((1u << present) - 1);
      for (std::size_t r = 0; r < 16; ++r) {
        float* out = dst + r * dst_stride + p0;
        if (present < 16)
          _mm512_mask_storeu_ps(out, lanes, x[r]);
        else if (aligned)
          _mm512_stream_ps(out, x[r]);
        else
          _mm512_storeu_ps(out, x[r]);
      }
    }
  }
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

namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL {

namespace {

#if defined(__AVX2__)
// Rows are scattered over memory: each is fetched this many words ahead, across documents.
constexpr std::size_t kGatherAhead = 8;
#endif

#if defined(__AVX512F__)
// Sixteen lanes a register: up to eight registers of minima, one walk over a document's words
// for up to 128 query words (20news's queries average 112).
constexpr int kLanesPerRegister = 16;
constexpr int kMaxRegisters = 8;
#elif defined(__AVX2__)
constexpr int kLanesPerRegister = 8;
constexpr int kMaxRegisters = 4;
#endif

#if defined(__AVX2__)
// Fetches the lines of a row's columns [t0, t0 + width) ahead of their use: the rows are
// scattered, and a block of columns spans several lines.
inline void prefetch_columns(const float* src, std::size_t width) {
  const auto first = reinterpret_cast<std::uintptr_t>(src) / 64;
  const auto last = reinterpret_cast<std::uintptr_t>(src + width - 1) / 64;
  for (std::uintptr_t line = first; line <= last; ++line)
    _mm_prefetch(reinterpret_cast<const char*>(line * 64), _MM_HINT_T0);
}

// gather_min's columns [t0, t0 + width) of document d, in R registers (lanes past the width
// neither read nor written; width > 0).
template <int R>
void gather_min_block(const float* rows, std::size_t stride, const std::uint64_t* indptr,
                      const std::uint32_t* idx, std::size_t d, std::uint64_t last, std::size_t t0,
                      std::size_t width, float* out) {
  constexpr int L = kLanesPerRegister;
  const int tail = static_cast<int>(width) - L * (R - 1);  // lanes of the last register, 1..L
#if defined(__AVX512F__)
  using Vec = __m512;
  const __mmask16 mask = static_cast<__mmask16>((1u << tail) - 1);
  const auto min_last = [&](Vec a, const float* src) {
    return _mm512_mask_min_ps(a, mask, a, _mm512_maskz_loadu_ps(mask, src));
  };
  // _mm512_min_ps as its masked form over every lane: GCC 12 warns of the plain one's
  // undefined operand once inlined here.
  const auto min_full = [](Vec a, const float* src) {
    return _mm512_mask_min_ps(a, 0xFFFF, a, _mm512_loadu_ps(src));
  };
  const Vec inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
#else
  using Vec = __m256;
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const auto min_last = [&](Vec a, const float* src) {
    return _mm256_min_ps(a, _mm256_maskload_ps(src, mask));
  };
  const auto min_full = [](Vec a, const float* src) {
    return _mm256_min_ps(a, _mm256_loadu_ps(src));
  };
  const Vec inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
#endif
  Vec acc[R];
  for (int k = 0; k < R; ++k) acc[k] = inf;
  for (std::uint64_t p = indptr[d]; p < indptr[d + 1]; ++p) {
    if (p + kGatherAhead < last)
      prefetch_columns(rows + idx[p + kGatherAhead] * stride + t0, width);
    const float* src = rows + idx[p] * stride + t0;
    for (int k = 0; k + 1 < R; ++k) acc[k] = min_full(acc[k], src + L * k);
    acc[R - 1] = min_last(acc[R - 1], src + L * (R - 1));
  }
  for (int k = 0; k + 1 < R; ++k)
#if defined(__AVX512F__)
    _mm512_storeu_ps(out + t0 + L * k, acc[k]);
  _mm512_mask_storeu_ps(out + t0 + L * (R - 1), mask, acc[R - 1]);
#else
    _mm256_storeu_ps(out + t0 + L * k, acc[k]);
  _mm256_maskstore_ps(out + t0 + L * (R - 1), mask, acc[R - 1]);
#endif
}

template <int... R>
void gather_min_width(std::integer_sequence<int, R...>, int registers, const float* rows,
                      std::size_t stride, const std::uint64_t* indptr, const std::uint32_t* idx,
                      std::size_t d, std::uint64_t last, std::size_t t0, std::size_t width,
                      float* out) {
  ((registers == R + 1 ? gather_min_block<R + 1>(rows, stride, indptr, idx, d, last, t0, width, out)
                       : void()),
   ...);
}
#endif

}  // namespace

void gather_min(const float* rows, std::size_t stride, const std::uint64_t* indptr,
                const std::uint32_t* idx, std::size_t n_docs, std::size_t h, float* out) {
#if defined(__AVX2__)
  constexpr std::size_t kBlock = std::size_t{kLanesPerRegister} * kMaxRegisters;
  const std::uint64_t last = indptr[n_docs];
  for (std::size_t d = 0; d < n_docs; ++d, out += h)
    for (std::size_t t0 = 0; t0 < h; t0 += kBlock) {
      const std::size_t width = std::min(kBlock, h - t0);
      const auto registers = static_cast<int>((width + kLanesPerRegister - 1) / kLanesPerRegister);
      gather_min_width(std::make_integer_sequence<int, kMaxRegisters>{}, registers, rows, stride,
                       indptr, idx, d, last, t0, width, out);
    }
#else
  for (std::size_t d = 0; d < n_docs; ++d, out += h) {
    std::fill(out, out + h, std::numeric_limits<float>::infinity());
    for (std::uint64_t p = indptr[d]; p < indptr[d + 1]; ++p) {
      const float* src = rows + idx[p] * stride;
      for (std::size_t t = 0; t < h; ++t) out[t] = std::min(out[t], src[t]);
    }
  }
#endif
}

}  // namespace lcrwmd::cpu::LCRWMD_SIMD_LEVEL
