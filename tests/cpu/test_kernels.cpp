// The CPU kernels: each SIMD level this machine runs gives bit for bit the scalar level's
// floats, on every length around the vector widths, and the scalar level agrees with a direct
// computation in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "cpu/kernel_levels.h"
#include "cpu/simd.h"
#include "lcrwmd/error.h"

namespace lcrwmd {
namespace {

using cpu::Kernels;
using cpu::Simd;
using namespace test;

TEST(SimdKernels, ScalarAlwaysThereAndChosenLevelIsSupported) {
  ASSERT_NE(cpu::kernels_for(Simd::scalar), nullptr);
  const Kernels& k = cpu::kernels();
  EXPECT_EQ(cpu::kernels_for(k.level), &k);
  // The chosen level is the widest supported (unless LCRWMD_SIMD caps it).
  if (!std::getenv("LCRWMD_SIMD")) {
    for (const Kernels* w : wider_levels()) EXPECT_GE(k.level, w->level);
  }
}

TEST(SimdKernels, ScalarMatchesDoublePrecision) {
  std::mt19937 rng(1);
  for (std::size_t m : kLengths) {
    const std::vector<float> a = random_floats(m, rng, -1, 1), b = random_floats(m, rng, -1, 1);
    double norm = 0, dist = 0;
    for (std::size_t d = 0; d < m; ++d) {
      norm += double{a[d]} * a[d];
      dist += (double{a[d]} - b[d]) * (double{a[d]} - b[d]);
    }
    EXPECT_NEAR(scalar().sq_norm(a.data(), m), norm, 1e-5 * (1 + norm)) << m;
    EXPECT_NEAR(scalar().sq_dist(a.data(), b.data(), m), dist, 1e-5 * (1 + dist)) << m;
    EXPECT_NEAR(scalar().sq_dist_f64(a.data(), b.data(), m), dist, 1e-12 * (1 + dist)) << m;
    EXPECT_EQ(scalar().sq_dist(a.data(), a.data(), m), 0.0f);  // a document's own words
    // A word's c-transform: the least of its distances less the potentials.
    const std::vector<float> sq = random_floats(m, rng, 0, 4);
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t t = 0; t < m; ++t) least = std::min(least, std::sqrt(double{sq[t]}) - a[t]);
    if (m == 0)
      EXPECT_EQ(scalar().min_dist_minus(sq.data(), a.data(), m), least);
    else
      EXPECT_NEAR(scalar().min_dist_minus(sq.data(), a.data(), m), least, 1e-6) << m;
  }
}

// The columns holding a value under their limit (the strips of phase 1's bounds, whose rows
// past the strip's end hold an earlier strip's values): every level against a direct loop,
// rows around the vector widths, values below every limit just past each column's end (an
// over-read would report it), NaN, an infinite limit, ties (not below).
TEST(SimdKernels, ColumnsBelowTheirLimitAtEveryLevel) {
  std::mt19937 rng(9);
  std::vector<const Kernels*> levels = wider_levels();
  levels.push_back(&scalar());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::size_t all_rows[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 40}, all_n[] = {0, 1, 5, 37};
  for (const std::size_t rows : all_rows)
    for (const std::size_t n : all_n) {
      const std::size_t stride = rows + 3;
      std::vector<float> tile = random_floats(n * stride + 3, rng, 1, 5);
      std::vector<float> limit = random_floats(n, rng, 1, 5);
      for (std::size_t c = 0; c < n; ++c) {
        for (std::size_t r = rows; r < stride; ++r) tile[c * stride + r] = -1.0f;
        if (rows > 2 && c % 3 == 0) tile[c * stride + 1] = nan;
        if (c % 4 == 1) limit[c] = std::numeric_limits<float>::infinity();
        if (rows > 0 && c % 5 == 2) {  // all equal to the limit: not below it
          limit[c] = 2.0f;
          for (std::size_t r = 0; r < rows; ++r) tile[c * stride + r] = 2.0f;
        }
      }
      std::vector<std::uint32_t> want;
      for (std::size_t c = 0; c < n; ++c) {
        bool below = false;
        for (std::size_t r = 0; r < rows; ++r) below |= tile[c * stride + r] < limit[c];
        if (below) want.push_back(static_cast<std::uint32_t>(c));
      }
      for (const Kernels* k : levels) {
        SCOPED_TRACE(std::string(cpu::simd_name(k->level)) + " rows " + std::to_string(rows) +
                     " columns " + std::to_string(n));
        std::vector<std::uint32_t> got(n + 1, 999);
        got.resize(k->columns_below(tile.data(), stride, rows, limit.data(), n, got.data()));
        EXPECT_EQ(got, want);
      }
    }
}

TEST(SimdKernels, DenseKernelsBitIdenticalToScalar) {
  if (wider_levels().empty()) GTEST_SKIP() << "this CPU runs the scalar level only";
  std::mt19937 rng(2);
  for (const Kernels* k : wider_levels())
    for (std::size_t m : kLengths) {
      SCOPED_TRACE(std::string(cpu::simd_name(k->level)) + " length " + std::to_string(m));
      const std::vector<float> a = random_floats(m, rng, -3, 3), b = random_floats(m, rng, -3, 3);
      EXPECT_EQ(k->sq_norm(a.data(), m), scalar().sq_norm(a.data(), m));
      EXPECT_EQ(k->sq_dist(a.data(), b.data(), m), scalar().sq_dist(a.data(), b.data(), m));
      EXPECT_EQ(k->sq_dist_f64(a.data(), b.data(), m), scalar().sq_dist_f64(a.data(), b.data(), m));
      EXPECT_EQ(k->min_of(a.data(), m, 2.5f), scalar().min_of(a.data(), m, 2.5f));
      const std::vector<float> sq = random_floats(m, rng, 0, 9);
      EXPECT_EQ(k->min_dist_minus(sq.data(), a.data(), m),
                scalar().min_dist_minus(sq.data(), a.data(), m));

      // Phase 1's intervals from products, and the candidates under a limit.
      const std::vector<float> p = random_floats(m, rng, -2, 2),
                               norms = random_floats(m, rng, 0, 4);
      const std::vector<float> ta = random_floats(m, rng, 0, 1e-2f),
                               tb = random_floats(m, rng, 0, 1e-2f),
                               tc = random_floats(m, rng, 0, 1e-3f);
      const cpu::BoundTermArrays rows{norms.data(), ta.data(), tb.data(), tc.data()};
      const cpu::BoundTerms col{1.5f, 0.3f, 0.01f, 1e-4f};
      std::vector<float> lo(m), hi(m), lo2(m), hi2(m);
      k->bound_sq_distances(p.data(), rows, col, m, lo.data(), hi.data());
      scalar().bound_sq_distances(p.data(), rows, col, m, lo2.data(), hi2.data());
      EXPECT_EQ(lo, lo2);
      EXPECT_EQ(hi, hi2);
      std::vector<float> limit = random_floats(m, rng, 0, 8), up = limit, up2 = limit;
      k->upper_min_into(up.data(), lo.data(), col, rows, m);
      scalar().upper_min_into(up2.data(), lo.data(), col, rows, m);
      EXPECT_EQ(up, up2);
      std::vector<std::uint32_t> found(m), found2(m);
      const std::size_t n = k->select_at_most(lo.data(), limit.data(), m, found.data());
      ASSERT_EQ(n, scalar().select_at_most(lo.data(), limit.data(), m, found2.data()));
      EXPECT_TRUE(std::equal(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(n),
                             found2.begin()));
      std::vector<std::int32_t> sums(m);
      for (std::size_t r = 0; r < m; ++r)
        sums[r] = static_cast<std::int32_t>(rng() % 200001) - 100000;
      std::vector<float> scaled(m), scaled2(m);
      k->estimates_s32(sums.data(), norms.data(), 0.37f, 2.5f, m, scaled.data());
      scalar().estimates_s32(sums.data(), norms.data(), 0.37f, 2.5f, m, scaled2.data());
      EXPECT_EQ(scaled, scaled2);
      k->estimates(p.data(), 2.5f, m, scaled.data());
      scalar().estimates(p.data(), 2.5f, m, scaled2.data());
      EXPECT_EQ(scaled, scaled2);
      // Phase 1's rounding: the same bits at every level, on ordinary values, denormals, NaN,
      // huge values and the int8 limits.
      std::vector<float> v = random_floats(m, rng, -3, 3);
      if (m > 4) {
        v[0] = 1e-40f;
        v[1] = std::numeric_limits<float>::quiet_NaN();
        v[2] = 3.4e38f;
        v[3] = -1e-39f;
        v[4] = 2.99999f;
      }
      std::vector<std::uint16_t> b16(m), b16s(m);
      k->round_bf16(v.data(), m, b16.data());
      scalar().round_bf16(v.data(), m, b16s.data());
      EXPECT_EQ(b16, b16s);
      std::vector<std::int8_t> i8(m), i8s(m);
      k->round_int8(v.data(), m, 127.0f / 3.0f, i8.data());
      scalar().round_int8(v.data(), m, 127.0f / 3.0f, i8s.data());
      EXPECT_EQ(i8, i8s);
    }
}

// Phase 1's interval kernel against its formula in double, NaN taken as "anything"; the
// selections (one column, several) against a direct loop; min_arg_columns against min_arg_into.
TEST(SimdKernels, BoundsHoldTheirEstimateAndSelectionIsExact) {
  std::mt19937 rng(7);
  for (std::size_t m : kLengths) {
    const std::vector<float> p = random_floats(m, rng, -2, 2), sq = random_floats(m, rng, 0, 4);
    const std::vector<float> ta = random_floats(m, rng, 0, 0.1f),
                             tb = random_floats(m, rng, 0, 0.1f),
                             tc = random_floats(m, rng, 0, 0.1f);
    const cpu::BoundTerms col{2.0f, 0.5f, 0.25f, 0.125f};
    std::vector<float> lo(m), hi(m);
    std::vector<float> products = p;
    if (m > 3) products[3] = std::numeric_limits<float>::quiet_NaN();
    scalar().bound_sq_distances(products.data(), {sq.data(), ta.data(), tb.data(), tc.data()}, col,
                                m, lo.data(), hi.data());
    for (std::size_t r = 0; r < m; ++r) {
      if (r == 3) {
        EXPECT_EQ(lo[r], 0.0f);
        EXPECT_EQ(hi[r], std::numeric_limits<float>::infinity());
        continue;
      }
      const double estimate = double{sq[r]} + p[r];  // p as the estimate less sq
      const double beta = double{ta[r]} * 0.5 + double{tb[r]} * 0.25 + tc[r] + 0.125;
      EXPECT_NEAR(lo[r], std::max(estimate - beta, 0.0), 1e-5) << r;
      EXPECT_NEAR(hi[r], estimate + beta, 1e-5) << r;
      EXPECT_GE(lo[r], 0.0f);
    }
    // Several columns at once (a strip of m rows, columns ld apart, written ld2 apart): the
    // same bits as bound_sq_distances column by column, at every level.
    {
      const std::size_t nc = 21, ld = m + 5, ld2 = m + 2;
      std::vector<float> g = random_floats(nc * ld, rng, -2, 2);
      if (m > 1) g[7 * ld + 1] = std::numeric_limits<float>::quiet_NaN();
      std::vector<cpu::BoundTerms> cols(nc);
      for (std::size_t c = 0; c < nc; ++c) {
        const std::vector<float> t = random_floats(3, rng, 0, 0.2f);
        cols[c] = {0.0f, t[0], t[1], t[2]};
      }
      std::vector<float> want(nc * ld2, -1.0f);
      for (std::size_t c = 0; c < nc; ++c)
        scalar().bound_sq_distances(g.data() + c * ld, {sq.data(), ta.data(), tb.data(), tc.data()},
                                    cols[c], m, want.data() + c * ld2, nullptr);
      std::vector<const Kernels*> levels = wider_levels();
      levels.push_back(&scalar());
      for (const Kernels* k : levels) {
        std::vector<float> got(nc * ld2, -1.0f);
        k->bound_columns(g.data(), ld, {sq.data(), ta.data(), tb.data(), tc.data()}, m, cols.data(),
                         nc, got.data(), ld2);
        EXPECT_EQ(got, want) << m;
      }
    }
    const std::vector<float> limit = random_floats(m, rng, 0, 6);
    std::vector<std::uint32_t> found(m);
    const std::size_t n = scalar().select_at_most(lo.data(), limit.data(), m, found.data());
    std::vector<std::uint32_t> expected;
    for (std::size_t r = 0; r < m; ++r)
      if (lo[r] <= limit[r]) expected.push_back(static_cast<std::uint32_t>(r));
    ASSERT_EQ(n, expected.size());
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), found.begin()));
    // The least three of each query's columns of a tile (stride m + 1, rows m: every tail of
    // the 16- and 32-row strips), NaN in places, ties, a query of one column, an empty one, and
    // one long enough to be split among the vector levels' chains, its columns repeated (ties
    // between runs).
    const std::size_t stride = m + 1;
    std::vector<float> tile = random_floats(6 * stride, rng, 0, 6);
    if (m > 2) tile[3 * stride + 2] = std::numeric_limits<float>::quiet_NaN();
    tile[1 * stride] = tile[2 * stride];
    tile[5 * stride + m - 1] = tile[4 * stride + m - 1];
    const std::uint32_t cols[] = {3, 1, 2, 4, 5, 0, 2, 5, 4, 2, 0, 3, 1, 2, 5, 0, 4, 1, 3, 5};
    const std::uint64_t indptr[] = {0, 4, 4, 5, 9, 20};
    const std::size_t nq = 5, ld = m + 3;
    const auto run = [&](const Kernels& k) {
      std::vector<float> v(3 * nq * ld, -1.0f);
      std::vector<std::uint32_t> a(2 * nq * ld, 99);
      k.least_three_queries(
          {v.data(), v.data() + nq * ld, v.data() + 2 * nq * ld, a.data(), a.data() + nq * ld}, ld,
          tile.data(), stride, m, cols, indptr, nq);
      return std::make_pair(v, a);
    };
    const auto [v, a] = run(scalar());
    constexpr float kInf = std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < nq; ++j)
      for (std::size_t r = 0; r < ld; ++r) {
        const std::size_t e = j * ld + r;
        if (r >= m) {  // past the rows: untouched
          EXPECT_EQ(v[e], -1.0f);
          EXPECT_EQ(a[e], 99u);
          continue;
        }
        const auto first = static_cast<std::uint32_t>(indptr[j]);
        std::vector<std::pair<float, std::uint32_t>> seen;
        for (std::uint32_t q = first; q < indptr[j + 1]; ++q) {
          const float x = tile[cols[q] * stride + r];
          if (!std::isnan(x)) seen.push_back({x, q});
        }
        std::stable_sort(seen.begin(), seen.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        seen.resize(3, {kInf, first});
        EXPECT_EQ(v[e], seen[0].first);
        EXPECT_EQ(v[nq * ld + e], seen[1].first);
        EXPECT_EQ(v[2 * nq * ld + e], seen[2].first);
        EXPECT_EQ(a[e], seen[0].second);
        EXPECT_EQ(a[nq * ld + e], seen[1].second);
      }
    for (const Kernels* k : wider_levels()) EXPECT_EQ(run(*k), run(scalar()));
    // sq_dist of several vectors at once: sq_dist's bits, at every level.
    std::vector<const float*> rows_of;
    for (std::size_t i = 0; i < 7; ++i) rows_of.push_back(tile.data() + (i % 4) * (m / 4));
    std::vector<float> batch(7);
    std::vector<const Kernels*> levels = wider_levels();
    levels.push_back(&scalar());
    for (const Kernels* k : levels) {
      k->sq_dist_batch(rows_of.data(), sq.data(), 7, m / 2, batch.data());
      for (std::size_t i = 0; i < 7; ++i)
        EXPECT_EQ(batch[i], scalar().sq_dist(rows_of[i], sq.data(), m / 2)) << i;
    }
  }
}

// What a top-k keeps of phase 1 against a direct loop at every level: blocks of sixteen rows
// and sixteen queries (the in-register transposes) and every tail of either, positions counted
// from each query's first column up to the 16 bits they keep, +inf where a query had no word.
TEST(SimdKernels, KeepLeastWritesZAndTheKeptBounds) {
  std::mt19937 rng(13);
  std::vector<const Kernels*> levels = wider_levels();
  levels.push_back(&scalar());
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (const std::size_t rows : {1, 15, 16, 17, 40})
    for (const std::size_t nq : {1, 15, 16, 17, 35}) {
      const std::size_t ld = 48, z_ld = nq + 3;
      std::vector<float> v = random_floats(3 * nq * ld, rng, 0, 50);
      std::vector<std::uint64_t> first(nq);
      std::vector<std::uint32_t> a(2 * nq * ld);
      for (std::size_t j = 0; j < nq; ++j) {
        first[j] = j * 70000 + j % 5;
        for (std::size_t r = 0; r < ld; ++r) {
          a[j * ld + r] = static_cast<std::uint32_t>(first[j] + (r * 7 + j) % 65536);
          a[(nq + j) * ld + r] = static_cast<std::uint32_t>(first[j] + (r == 3 ? 65535 : r + j));
        }
      }
      v[0] = v[nq * ld] = v[2 * nq * ld] = kInf;
      const cpu::Least3 t{v.data(), v.data() + nq * ld, v.data() + 2 * nq * ld, a.data(),
                          a.data() + nq * ld};
      for (const Kernels* k : levels) {
        std::vector<float> z(rows * z_ld, -1.0f);
        std::vector<cpu::KeptLeast> kept(rows * z_ld, {-1.0f, -1.0f, 7, 7});
        k->keep_least(t, ld, rows, nq, first.data(), z.data(), kept.data(), z_ld);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t j = 0; j < z_ld; ++j) {
            const std::size_t at = r * z_ld + j, e = j * ld + r;
            if (j >= nq) {  // past the queries: untouched
              EXPECT_EQ(z[at], -1.0f);
              EXPECT_EQ(kept[at].a1, 7);
              continue;
            }
            EXPECT_EQ(z[at], std::sqrt(t.v1[e])) << rows << " " << nq << " " << r << " " << j;
            EXPECT_EQ(kept[at].v2, t.v2[e]);
            EXPECT_EQ(kept[at].v3, t.v3[e]);
            EXPECT_EQ(kept[at].a1, t.a1[e] - first[j]) << rows << " " << nq << " " << r << " " << j;
            EXPECT_EQ(kept[at].a2, t.a2[e] - first[j]);
          }
      }
    }
}

// Documents' least word distances against a direct loop at every level: widths around the
// registers kept (eight lanes, four at a time), from an offset into the rows, repeated and
// out-of-order words, documents with no words, a block of documents not the first; nothing
// past the width read (NaN there would show) or written.
TEST(SimdKernels, GatherMinIsTheLeastOfEachDocumentsWordRows) {
  std::mt19937 rng(17);
  std::vector<const Kernels*> levels = wider_levels();
  levels.push_back(&scalar());
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (const std::size_t h :
       {0, 1, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 70, 112, 127, 128, 129, 200})
    for (const std::size_t c0 : {0, 3}) {
      const std::size_t stride = c0 + h + (h % 3), n_rows = 23;
      std::vector<float> rows = random_floats(n_rows * stride + 16, rng, 0, 40);
      for (std::size_t u = 0; u < n_rows; ++u)
        for (std::size_t t = 0; t < stride; ++t)
          if (t < c0 || t >= c0 + h) rows[u * stride + t] = std::numeric_limits<float>::quiet_NaN();
      const std::size_t lengths[] = {0, 1, 9, 40, 0, 3, 17};
      std::vector<std::uint64_t> indptr{0};
      std::vector<std::uint32_t> idx;
      for (const std::size_t len : lengths) {
        for (std::size_t p = 0; p < len; ++p)
          idx.push_back(static_cast<std::uint32_t>(rng() % n_rows));
        indptr.push_back(idx.size());
      }
      const std::size_t first = 2, n_docs = std::size(lengths) - first;
      std::vector<float> want(n_docs * h + 1, kInf);
      want.back() = -1.0f;  // one past the last: untouched
      for (std::size_t d = 0; d < n_docs; ++d)
        for (std::uint64_t p = indptr[first + d]; p < indptr[first + d + 1]; ++p)
          for (std::size_t t = 0; t < h; ++t)
            want[d * h + t] = std::min(want[d * h + t], rows[idx[p] * stride + c0 + t]);
      for (const Kernels* k : levels) {
        std::vector<float> out(n_docs * h + 1, 7.0f);
        out.back() = -1.0f;
        k->gather_min(rows.data() + c0, stride, indptr.data() + first, idx.data(), n_docs, h,
                      out.data());
        EXPECT_EQ(out, want) << cpu::simd_name(k->level) << " h " << h << " c0 " << c0;
      }
    }
}

// The cache's transpose against a direct loop at every level: strips of sixteen rows (the
// in-register transpose), other heights and strides, into aligned and unaligned rows, padded
// or packed (fewer than sixteen columns, row after row: a typed query's cache).
TEST(SimdKernels, ColumnsToRowsTransposes) {
  std::mt19937 rng(11);
  std::vector<const Kernels*> levels = wider_levels();
  levels.push_back(&scalar());
  for (const auto& [rows, stride] :
       {std::pair<std::size_t, std::size_t>{16, 16}, {16, 17}, {15, 16}, {3, 5}, {33, 40}})
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{5}, std::size_t{15}, std::size_t{16}, std::size_t{37}})
      for (const std::size_t dst_stride : {std::size_t{48}, n})
        for (const std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
          const std::size_t ncols = 41;
          const std::vector<float> tile = random_floats(ncols * stride, rng, 0, 6);
          std::vector<std::uint32_t> cols(n);
          for (std::size_t p = 0; p < n; ++p)
            cols[p] = static_cast<std::uint32_t>((p * 7 + 3) % ncols);
          for (const Kernels* k : levels) {
            std::vector<float> buffer(rows * dst_stride + 32, -1.0f);
            const auto misalignment = reinterpret_cast<std::uintptr_t>(buffer.data()) % 64;
            float* dst = buffer.data() + (64 - misalignment) % 64 / sizeof(float) + offset;
            k->columns_to_rows(tile.data(), stride, rows, cols.data(), n, dst, dst_stride);
            for (std::size_t r = 0; r < rows; ++r)
              for (std::size_t p = 0; p < dst_stride; ++p)
                EXPECT_EQ(dst[r * dst_stride + p],
                          p < n ? tile[std::size_t{cols[p]} * stride + r] : -1.0f)
                    << rows << " " << stride << " " << n << " " << r << " " << p;
            // Nothing written past the last row.
            for (float* x = dst + rows * dst_stride; x < buffer.data() + buffer.size(); ++x)
              EXPECT_EQ(*x, -1.0f) << rows << " " << stride << " " << n << " " << dst_stride;
          }
        }
}

TEST(SimdKernels, SparseKernelsBitIdenticalToScalar) {
  std::mt19937 rng(3);
  const std::size_t v = 1000;
  std::vector<float> z = random_floats(v, rng, -1, 2);  // negative: B2 terms
  z[0] = -0.5f;
  for (std::size_t h : kLengths) {
    std::vector<std::uint32_t> idx(h);
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % v);
    if (h > 0) idx[h / 2] = 0;  // at least one negative entry to split off
    const std::vector<float> val = random_floats(h, rng, 0, 1);
    // The scalar level against double precision.
    double dot = 0, pos = 0, neg = 0;
    for (std::size_t p = 0; p < h; ++p) {
      const double x = z[idx[p]];
      dot += val[p] * x;
      pos += val[p] * std::max(x, 0.0);
      neg -= std::min(x, 0.0);
    }
    const double tol = 1e-5 * static_cast<double>(1 + h);
    const float s = scalar().sparse_dot(idx.data(), val.data(), h, z.data());
    const cpu::SplitDot sp = scalar().sparse_dot_split(idx.data(), val.data(), h, z.data());
    EXPECT_NEAR(s, dot, tol) << h;
    EXPECT_NEAR(sp.dot, pos, tol) << h;
    EXPECT_NEAR(sp.negative, neg, tol) << h;
    if (h > 0) {
      EXPECT_GT(sp.negative, 0.0f);
    }
    for (const Kernels* k : wider_levels()) {
      SCOPED_TRACE(std::string(cpu::simd_name(k->level)) + " h " + std::to_string(h));
      EXPECT_EQ(k->sparse_dot(idx.data(), val.data(), h, z.data()), s);
      const cpu::SplitDot kp = k->sparse_dot_split(idx.data(), val.data(), h, z.data());
      EXPECT_EQ(kp.dot, sp.dot);
      EXPECT_EQ(kp.negative, sp.negative);
    }
  }
}

// ACT-1's gathered transfer: the scalar level against a direct sum in double (words whose
// mass fits the nearest word's weight and words that spill to the second), every wider level
// bit for bit.
TEST(SimdKernels, Act1DotMatchesDirectTransfers) {
  std::mt19937 rng(7);
  const std::size_t v = 500;
  std::vector<float> slots = random_floats(4 * v, rng, 0, 1);
  for (std::size_t u = 0; u < v; ++u) slots[4 * u + 2] += slots[4 * u];  // c1 >= c0
  for (std::size_t h : kLengths) {
    std::vector<std::uint32_t> idx(h);
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % v);
    const std::vector<float> val = random_floats(h, rng, 0, 1);
    double want = 0;
    std::size_t spilled = 0;
    for (std::size_t p = 0; p < h; ++p) {
      const float* s = slots.data() + 4 * idx[p];
      const double moved = std::min<double>(val[p], s[1]);
      want += moved * s[0] + (val[p] - moved) * s[2];
      spilled += val[p] > s[1];
    }
    if (h > 8) {
      EXPECT_GT(spilled, 0u);
      EXPECT_LT(spilled, h);
    }
    const float s = scalar().act1_dot(idx.data(), val.data(), h, slots.data());
    EXPECT_NEAR(s, want, 1e-5 * static_cast<double>(1 + h)) << h;
    for (const Kernels* k : wider_levels())
      EXPECT_EQ(k->act1_dot(idx.data(), val.data(), h, slots.data()), s)
          << cpu::simd_name(k->level) << " h " << h;
    // act1_rows: the slots read as q = 5 queries' rows (vocabulary v / 5); query j's sum is
    // act1_dot's on query j's slots alone, bit for bit (the batch does not change a sum).
    constexpr std::size_t q = 5;
    std::vector<std::uint32_t> rows(idx);
    for (auto& i : rows) i = static_cast<std::uint32_t>(i / q);
    std::vector<float> acc(q), lanes(cpu::kSumLanes * q);
    scalar().act1_rows(rows.data(), val.data(), h, slots.data(), q, acc.data(), lanes.data());
    for (std::size_t j = 0; j < q; ++j) {
      std::vector<float> own(slots.size() / q);
      for (std::size_t u = 0; u < own.size() / 4; ++u)
        std::copy_n(slots.data() + (u * q + j) * 4, 4, own.data() + u * 4);
      EXPECT_EQ(acc[j], scalar().act1_dot(rows.data(), val.data(), h, own.data()))
          << "query " << j << " h " << h;
    }
    for (const Kernels* k : wider_levels()) {
      std::vector<float> wide(q);
      k->act1_rows(rows.data(), val.data(), h, slots.data(), q, wide.data(), lanes.data());
      EXPECT_EQ(wide, acc) << cpu::simd_name(k->level) << " h " << h;
    }
  }
}

// The dual bound's kernels: exp and square roots against libm, Sinkhorn's scaling against a
// direct double loop, the c-transformed dual against its definition; every wider level bit
// for bit.
TEST(SimdKernels, SparseTimesDenseIsEachColumnsDot) {
  std::mt19937 rng(4);
  const std::size_t v = 300, rows = 5;
  for (std::size_t q : {1u, 3u, 8u, 17u}) {
    const std::vector<float> z = random_floats(v * q, rng, -1, 2);
    // Rows of 0, 1, 9, 30 and 107 nonzeros, indptr not starting at 0 (a block of a larger CSR).
    std::vector<std::uint64_t> indptr{40};
    for (std::size_t h : {0u, 1u, 9u, 30u, 107u}) indptr.push_back(indptr.back() + h);
    std::vector<std::uint32_t> idx(indptr.back());
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % v);
    const std::vector<float> val = random_floats(idx.size(), rng, 0, 1);
    std::vector<float> lanes(2 * cpu::kSumLanes * q);
    for (bool split : {false, true}) {
      std::vector<float> acc(rows * q), neg(split ? rows * q : 0);
      scalar().sparse_times_dense(indptr.data(), idx.data(), val.data(), rows, z.data(), q,
                                  acc.data(), split ? neg.data() : nullptr, lanes.data());
      // Each entry is the one-query kernel's, bit for bit: a batch does not change a sum.
      for (std::size_t j = 0; j < q; ++j) {
        std::vector<float> column(v);
        for (std::size_t u = 0; u < v; ++u) column[u] = z[u * q + j];
        for (std::size_t r = 0; r < rows; ++r) {
          const std::uint64_t b = indptr[r], h = indptr[r + 1] - b;
          if (split) {
            const cpu::SplitDot d =
                scalar().sparse_dot_split(idx.data() + b, val.data() + b, h, column.data());
            EXPECT_EQ(acc[r * q + j], d.dot) << r << " " << j;
            EXPECT_EQ(neg[r * q + j], d.negative) << r << " " << j;
          } else {
            EXPECT_EQ(acc[r * q + j],
                      scalar().sparse_dot(idx.data() + b, val.data() + b, h, column.data()))
                << r << " " << j;
          }
        }
      }
      for (const Kernels* k : wider_levels()) {
        std::vector<float> acc2(rows * q), neg2(split ? rows * q : 0);
        k->sparse_times_dense(indptr.data(), idx.data(), val.data(), rows, z.data(), q, acc2.data(),
                              split ? neg2.data() : nullptr, lanes.data());
        EXPECT_EQ(acc2, acc) << cpu::simd_name(k->level);
        EXPECT_EQ(neg2, neg) << cpu::simd_name(k->level);
      }
    }
  }
}

}  // namespace
}  // namespace lcrwmd
