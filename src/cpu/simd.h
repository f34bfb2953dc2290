#pragma once
// The CPU's hot loops, compiled once per instruction set (scalar x86-64, AVX2 + FMA, AVX-512)
// from one source (simd_kernels.cpp) and chosen at run time by cpuid, once: a built binary runs
// on any x86-64 and uses the widest vectors the machine has (hnswlib chooses the same way).
//
// Every level returns bit-for-bit the floats of the scalar one: the loops keep a fixed order of
// additions (eight lanes where they reduce), and no multiply-add is fused (-ffp-contract=off
// for the whole project). A result therefore never depends on the machine's SIMD level, only
// on OpenBLAS's GEMM kernel.
#include <cstddef>
#include <cstdint>

namespace lcrwmd::cpu {

enum class Simd { scalar, avx2, avx512 };

// A document's sum over its words adds them in one order whatever kernel, batch or level
// computes it: word p into lane p mod 8 while eight more remain, the rest into a tail, then
// combine_lanes(lanes) + tail. So a distance does not depend on which queries share its batch.
inline constexpr std::size_t kSumLanes = 8;
// Eight partial sums combined as a 256-bit horizontal add does: halves, then pairs.
inline float combine_lanes(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}
// The same for lanes kept q apart (lane l of column j at a[l * q + j]).
inline float combine_lanes(const float* a, std::size_t q) {
  const float l[kSumLanes] = {a[0],     a[q],     a[2 * q], a[3 * q],
                              a[4 * q], a[5 * q], a[6 * q], a[7 * q]};
  return combine_lanes(l);
}

// Per row, the least three values seen and the names of the least two (least_three_queries).
struct Least3 {
  float *v1, *v2, *v3;
  std::uint32_t *a1, *a2;
};

// What a top-k's phase 1 keeps of a (vocabulary word, query) pair beside Z's bound, for refining
// to find the pair's nearest word exactly: the second and third least lower bounds, and the
// positions among the query's words of the least two. (bfloat16 bounds, rounded down, took
// fewer bytes a pair but sent more distances through the scan of every word, and ran slower.)
struct KeptLeast {
  float v2, v3;
  std::uint16_t a1, a2;
};

struct SplitDot {
  float dot;       // sum val * max(z, 0)
  float negative;  // sum -min(z, 0)
};

// Phase 1's certified intervals (cpu/word_bounds.h): a vector's squared norm and share of the
// bound, and the same for consecutive vectors.
struct BoundTerms {
  float sq, a, b, c;
};
struct BoundTermArrays {
  const float *sq, *a, *b, *c;
};

// Phase 1's int8 operands as int8_bound_strip reads them (cpu/word_gemm.h rounds them): each
// vector is scale * q, q its bytes padded with zeros to kp, a multiple of 64.
struct Int8Rows {            // consecutive vocabulary words
  const std::int8_t* q;      // word r's bytes at q + r * kp
  const std::int32_t* bias;  // 128 times the sum of each word's bytes
  const float* scale;
  BoundTermArrays terms;  // each word's squared norm and share of the bound
};
struct Int8Columns {  // a batch's words, sixteen to a block, laid out for VNNI
  // Block b at blocks + b * 16 * kp: for each group g < kp / 4 of four bytes, the sixteen
  // words' groups one after another (64 bytes), each byte q + 128, as an unsigned byte (words
  // past the last: q = 0).
  const std::uint8_t* blocks;
  const float *scale, *sq;  // per word; sq its squared norm
  BoundTermArrays terms;    // per word its share of the bound (sq unused)
  // The words past the last whole block (nc % 16 of them: all of a typed query's) also laid out
  // for a kernel that spends no lane on absent words, or nullptr (then the blocks serve): in
  // parts by the binary digits of their number, largest first, each of kp * C bytes after the
  // one before; a part of C words (8, 4, 2, 1) gives each G = 16 / C lanes, and its step s (of
  // kp / (4 G)) is 64 bytes whose lane j + G c holds its word c's group s G + j, as q + 128.
  const std::uint8_t* narrow;
};

struct Kernels {
  Simd level;
  // sum a[d]^2
  float (*sq_norm)(const float* a, std::size_t m);
  // ||a - b||^2 from the differences: exactly 0 for identical vectors, accurate when small.
  float (*sq_dist)(const float* a, const float* b, std::size_t m);
  // out[i] = sq_dist(a[i], b, m) for i < n (the same bits), several at once.
  void (*sq_dist_batch)(const float* const* a, const float* b, std::size_t n, std::size_t m,
                        float* out);
  // ||a - b||^2 with differences and sums in double: the ground costs of exact WMD.
  double (*sq_dist_f64)(const float* a, const float* b, std::size_t m);
  // sum_p val[p] * z[idx[p]]: phase 2 of LC-RWMD per document.
  float (*sparse_dot)(const std::uint32_t* idx, const float* val, std::size_t h, const float* z);
  // The same with z's negative entries (LC-RWMD's B2 terms) summed apart and left out of the dot.
  SplitDot (*sparse_dot_split)(const std::uint32_t* idx, const float* val, std::size_t h,
                               const float* z);
  // ACT-1's phase 2 per document and one query: slots[4 u ..] = {c0, m0, c1, m1}, u's nearest
  // and second-nearest query word (cost, weight); each word sends min(val, m0) at c0 and the
  // rest at c1: sum_p min(val, m0) c0 + (val - min(val, m0)) c1.
  float (*act1_dot)(const std::uint32_t* idx, const float* val, std::size_t h, const float* slots);
  // The same for q queries at once: slots[(u * q + j) * 4 ..] is query j's row of u, and
  // acc[j] = act1_dot's sum for query j (the same bits). lanes: kSumLanes * q floats of scratch.
  void (*act1_rows)(const std::uint32_t* idx, const float* val, std::size_t h, const float* slots,
                    std::size_t q, float* acc, float* lanes);
  // out[e] = sqrt(double(sq[e])): ground costs in double from cached float squared distances.
  void (*sqrt_to_f64)(const float* sq, std::size_t n, double* out);
  // The dual bound's pieces (ot/dual_bound.cpp). sum_max_f64: the sum of x[0..n) >= 0 (in
  // eight lanes) and, in *max, their largest.
  double (*sum_max_f64)(const double* x, std::size_t n, double* max);
  // out[e] = exp(-c[e] * scale) for c[e] * scale
  // in [0, 80] (beyond: e^-80), to ~2e-7 relative near 0 and ~1e-7 |x| further out (the float
  // range reduction); the bound's feasibility does not depend on it, only its tightness.
  void (*exp_neg_scaled)(const double* c, std::size_t n, float scale, float* out);
  // Sinkhorn iterations on the na x nb kernel (row-major): u = a / (K v), v = b / (K^T u),
  // from u, v as given; col (nb floats) is scratch.
  void (*sinkhorn)(const float* kernel, std::size_t na, std::size_t nb, const float* a,
                   const float* b, int iterations, float* u, float* v, float* col);
  // sum_i a_i min_j (cost_ij - g_j) + sum_j b_j g_j with g_j = min_i (cost_ij - f_i): the dual
  // objective of f after both c-transforms. g (nb doubles) is scratch.
  double (*c_transformed_dual)(const double* cost, std::size_t na, std::size_t nb, const double* a,
                               const double* b, const double* f, double* g);
  // Phase 1's rounding of a vector, the same bits at every level: bf16 to nearest even, with
  // denormals and NaN to 0; int8 as nearbyint(x * invert) within [-127, 127] (NaN: -127).
  void (*round_bf16)(const float* x, std::size_t n, std::uint16_t* out);
  void (*round_int8)(const float* x, std::size_t n, float invert, std::int8_t* out);
  // Phase 1's estimates of one column, less each row's squared norm: g[r] = col_sq - 2 p[r]
  // from the products p (g may be p); from int8's integer sums, p[r] = float(sums[r]) *
  // (row_scale[r] * col_scale).
  void (*estimates)(const float* p, float col_sq, std::size_t n, float* g);
  void (*estimates_s32)(const std::int32_t* sums, const float* row_scale, float col_scale,
                        float col_sq, std::size_t n, float* g);
  // Phase 1's interval of n squared distances of one column from its estimates g: estimate =
  // rows.sq[r] + g[r], beta = rows.a[r] col.a + rows.b[r] col.b + rows.c[r] + col.c, lo[r] =
  // max(estimate - beta, 0), hi[r] = estimate + beta (skipped where hi is null); NaN gives
  // [0, +inf].
  void (*bound_sq_distances)(const float* g, BoundTermArrays rows, BoundTerms col, std::size_t n,
                             float* lo, float* hi);
  // bound_sq_distances' lower bounds for nc columns of n rows at once (the same bits): column
  // c's estimates at g + c * g_ld, its terms cols[c], its bounds to lo + c * lo_ld.
  void (*bound_columns)(const float* g, std::size_t g_ld, BoundTermArrays rows, std::size_t n,
                        const BoundTerms* cols, std::size_t nc, float* lo, std::size_t lo_ld);
  // The same lower bounds for int8 straight from the rounded vectors, each product summed in a
  // register and bounded there (no estimates written): lo[c * lo_ld + r] for rows r < n <= 16,
  // columns c < nc, the bits of estimates_s32 on the exact integer products followed by
  // bound_columns. On 512 bits with AVX512-VNNI at the avx512 level; on 256 bits at the avx2
  // level with AVX-VNNI (or AVX512-VNNI and AVX512VL, the level capped); else nullptr (phase 1
  // then runs oneDNN's GEMM and those two).
  void (*int8_bound_strip)(const Int8Rows& rows, std::size_t n, std::size_t kp,
                           const Int8Columns& cols, std::size_t nc, float* lo, std::size_t lo_ld);
  // Which instructions it runs, for reports ("avx512-vnni"; nullptr without it).
  const char* int8_bound_strip_isa;
  // From kept lower bounds lo of one row against n columns: limit[t] = min(limit[t], lo[t] +
  // 2 (row.a cols.a[t] + row.b cols.b[t] + row.c + cols.c[t])), an upper bound of each.
  void (*upper_min_into)(float* limit, const float* lo, BoundTerms row, BoundTermArrays cols,
                         std::size_t n);
  // The r < n with lo[r] <= limit[r], ascending, into rows; returns how many.
  std::size_t (*select_at_most)(const float* lo, const float* limit, std::size_t n,
                                std::uint32_t* rows);
  // The c < n whose column (tile + c * stride, `rows` entries, nothing past them read) holds
  // a value below limit[c], ascending, into cols; returns how many. NaN is below nothing.
  std::size_t (*columns_below)(const float* tile, std::size_t stride, std::size_t rows,
                               const float* limit, std::size_t n, std::uint32_t* cols);
  // For each query j < nq, over its columns p in [indptr[j], indptr[j + 1]) (column p at tile +
  // cols[p] * stride), the least three values of each row r < rows and the positions p of the
  // least two, into t at j * ld + r: from +inf (positions indptr[j]), a value below v1 moves
  // v1, v2 down, below v2 moves v2 down, below v3 replaces it; ties keep the earlier column;
  // NaN is passed over.
  void (*least_three_queries)(Least3 t, std::size_t ld, const float* tile, std::size_t stride,
                              std::size_t rows, const std::uint32_t* cols,
                              const std::uint64_t* indptr, std::size_t nq);
  // Rows r < rows of nq queries' least three (t at j * ld + r, as least_three_queries leaves
  // them) into rows of Z's bound and of what is kept beside it: z[r * z_ld + j] = sqrt(v1),
  // kept[r * z_ld + j] = {v2, v3, a1 - first[j], a2 - first[j]}, positions counted from the
  // query's first column (each query's fit 16 bits).
  void (*keep_least)(Least3 t, std::size_t ld, std::size_t rows, std::size_t nq,
                     const std::uint64_t* first, float* z, KeptLeast* kept, std::size_t z_ld);
  // A tile's columns into rows: dst[r * dst_stride + p] = tile[cols[p] * stride + r] for r <
  // rows, p < n (symmetric LC-RWMD's word-distance cache). Where dst and dst_stride are
  // 64-byte aligned the rows are written with non-temporal stores (nothing reads them soon).
  void (*columns_to_rows)(const float* tile, std::size_t stride, std::size_t rows,
                          const std::uint32_t* cols, std::size_t n, float* dst,
                          std::size_t dst_stride);
  // out[d * h + t] = min over p in [indptr[d], indptr[d + 1]) of rows[idx[p] * stride + t],
  // +inf for a document with no words, for d < n_docs, t < h (indptr absolute in idx): the
  // least over each document's words of their rows (LC-RWMD's D2 from its word distances).
  void (*gather_min)(const float* rows, std::size_t stride, const std::uint64_t* indptr,
                     const std::uint32_t* idx, std::size_t n_docs, std::size_t h, float* out);
  // min(init, min_r x[r])
  float (*min_of)(const float* x, std::size_t n, float init);
  // min_t (sqrt(sq[t]) - g[t]): a word's c-transform against potentials g (WMD's pricing bound);
  // +inf for n = 0.
  float (*min_dist_minus)(const float* sq, const float* g, std::size_t n);
  // Rows r < n_rows of a CSR block (indptr relative to idx/val, indptr[0] may be > 0) times the
  // row-major dense z (width q): acc[r * q + j] = sparse_dot of row r with column j of z (the
  // same bits). With `negative`: sparse_dot_split's parts, the dot into acc and the negative sum
  // into negative[r * q + j]. lanes: 2 * kSumLanes * q floats of scratch.
  void (*sparse_times_dense)(const std::uint64_t* indptr, const std::uint32_t* idx,
                             const float* val, std::size_t n_rows, const float* z, std::size_t q,
                             float* acc, float* negative, float* lanes);
};

// The kernels of the widest level this CPU supports, chosen on the first call. The environment
// variable LCRWMD_SIMD=scalar|avx2|avx512 caps the level (an unknown value is an error).
const Kernels& kernels();
// The kernels of one level, or nullptr where this build or this CPU lacks it (tests run each).
const Kernels* kernels_for(Simd level);
const char* simd_name(Simd level);

}  // namespace lcrwmd::cpu
