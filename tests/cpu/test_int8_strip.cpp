// Phase 1's int8 lower bounds straight from the rounded vectors (simd.h: int8_bound_strip), at
// every level that has them, against a direct loop: the exact integer products, then the
// scalar level's estimates_s32 and bound_sq_distances, bit for bit. Rows 1 to 16, columns 0
// to 70 around the sixteen-column block, also with those past the last block from their narrow
// layout, padded dimensions with and without a kernel of their own, extreme bytes, infinite terms,
// the output at an odd offset with NaN around it to catch a write past the strip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernel_levels.h"

namespace lcrwmd::test {
namespace {

using cpu::BoundTermArrays;
using cpu::Int8Columns;
using cpu::Int8Rows;

struct Int8Vectors {
  std::size_t n, kp;
  std::vector<std::int8_t> q;  // n x kp, zeros past dim
  std::vector<float> scale;
};

Int8Vectors random_vectors(std::size_t n, std::size_t dim, std::size_t kp, std::mt19937& rng) {
  Int8Vectors v{n, kp, std::vector<std::int8_t>(n * kp, 0), random_floats(n, rng, 1e-3f, 0.1f)};
  std::uniform_int_distribution<int> byte(-127, 127);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < dim; ++d) {
      // Every third vector at the extremes, where a sum that saturated or wrapped would show.
      const int x = i % 3 == 2 ? (d % 2 ? 127 : -127) : i % 3 == 1 ? 127 : byte(rng);
      v.q[i * kp + d] = static_cast<std::int8_t>(i % 7 == 6 ? -127 : x);
    }
  return v;
}

// The columns' layout as simd.h describes it, written out plainly.
std::vector<std::uint8_t> vnni_blocks(const Int8Vectors& c) {
  std::vector<std::uint8_t> b((c.n + 15) / 16 * 16 * c.kp, 128);
  for (std::size_t j = 0; j < c.n; ++j)
    for (std::size_t d = 0; d < c.kp; ++d)
      b[j / 16 * 16 * c.kp + d / 4 * 64 + j % 16 * 4 + d % 4] =
          static_cast<std::uint8_t>(c.q[j * c.kp + d] + 128);
  return b;
}

// The narrow layout of the columns past the last whole block, as simd.h describes it: parts
// of C = 8, 4, 2, 1 columns by the binary digits of their number, G = 16 / C lanes a column;
// a part's step s holds in lane j + G c its column c's group s G + j.
std::vector<std::uint8_t> narrow_blocks(const Int8Vectors& c) {
  std::vector<std::uint8_t> b(c.n % 16 * c.kp);
  std::size_t at = 0, first = c.n / 16 * 16;
  for (const std::size_t columns : {8, 4, 2, 1}) {
    if ((c.n % 16 & columns) == 0) continue;
    const std::size_t g = 16 / columns;
    for (std::size_t j = 0; j < columns; ++j)
      for (std::size_t d = 0; d < c.kp; ++d)
        b[at + d / 4 / g * 64 + (d / 4 % g + g * j) * 4 + d % 4] =
            static_cast<std::uint8_t>(c.q[(first + j) * c.kp + d] + 128);
    at += columns * c.kp;
    first += columns;
  }
  return b;
}

struct Terms {
  std::vector<float> sq, a, b, c;
  BoundTermArrays arrays() const { return {sq.data(), a.data(), b.data(), c.data()}; }
};
Terms random_terms(std::size_t n, std::mt19937& rng) {
  Terms t{random_floats(n, rng, 0, 50), random_floats(n, rng, 0, 0.5f),
          random_floats(n, rng, 0, 0.5f), random_floats(n, rng, 0, 0.1f)};
  if (n > 4) t.a[4] = std::numeric_limits<float>::infinity();  // NaN estimates: bound 0
  return t;
}

TEST(Int8BoundStrip, MatchesTheDirectLoopAtEveryLevel) {
  std::vector<const Kernels*> levels;
  for (const Kernels* k : wider_levels())
    if (k->int8_bound_strip) levels.push_back(k);
  EXPECT_EQ(scalar().int8_bound_strip, nullptr);
  if (levels.empty()) GTEST_SKIP() << "this CPU has neither AVX512-VNNI nor AVX-VNNI";
  std::mt19937 rng(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // (dimension, padded): the usual ones with a kernel of their own, one without (448).
  const std::size_t shapes[][2] = {{1, 64}, {7, 64}, {33, 64}, {100, 128}, {300, 320}, {420, 448}};
  for (const auto& [dim, kp] : shapes)
    for (std::size_t n : {1, 5, 15, 16}) {
      // The rows somewhere inside a longer vocabulary, the last of them at its very end.
      const std::size_t before = 3;
      const Int8Vectors rows = random_vectors(before + n, dim, kp, rng);
      std::vector<std::int32_t> bias(before + n);
      for (std::size_t r = 0; r < before + n; ++r) {
        std::int32_t s = 0;
        for (std::size_t d = 0; d < kp; ++d) s += rows.q[r * kp + d];
        bias[r] = 128 * s;
      }
      const Terms row_terms = random_terms(before + n, rng);
      for (std::size_t nc : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 70}) {
        const Int8Vectors cols = random_vectors(nc, dim, kp, rng);
        const std::vector<std::uint8_t> blocks = vnni_blocks(cols);
        const std::vector<std::uint8_t> narrow = narrow_blocks(cols);
        const Terms col_terms = random_terms(nc, rng);
        std::vector<float> col_scale = cols.scale;
        if (nc > 2) col_scale[2] = 1e30f;  // products overflow to inf
        // What oneDNN's sums and the kernels before give, column by column.
        const std::size_t ld = 19, offset = 3;
        std::vector<float> want((nc + 1) * ld + offset, nan);
        std::vector<std::int32_t> sums(n);
        std::vector<float> g(n);
        for (std::size_t c = 0; c < nc; ++c) {
          for (std::size_t r = 0; r < n; ++r) {
            std::int64_t s = 0;
            for (std::size_t d = 0; d < kp; ++d)
              s += std::int64_t{rows.q[(before + r) * kp + d]} * cols.q[c * kp + d];
            sums[r] = static_cast<std::int32_t>(s);
          }
          scalar().estimates_s32(sums.data(), rows.scale.data() + before, col_scale[c],
                                 col_terms.sq[c], n, g.data());
          const Terms& t = row_terms;
          scalar().bound_sq_distances(
              g.data(),
              {t.sq.data() + before, t.a.data() + before, t.b.data() + before, t.c.data() + before},
              {0.0f, col_terms.a[c], col_terms.b[c], col_terms.c[c]}, n,
              want.data() + offset + c * ld, nullptr);
        }
        const Int8Rows in_rows{rows.q.data() + before * kp,
                               bias.data() + before,
                               rows.scale.data() + before,
                               {row_terms.sq.data() + before, row_terms.a.data() + before,
                                row_terms.b.data() + before, row_terms.c.data() + before}};
        // The sixteen-lane blocks alone, and with the narrow layout of the rest.
        const Int8Columns layouts[] = {
            {blocks.data(), col_scale.data(), col_terms.sq.data(), col_terms.arrays(), nullptr},
            {blocks.data(), col_scale.data(), col_terms.sq.data(), col_terms.arrays(),
             narrow.data()}};
        for (const Kernels* k : levels)
          for (const Int8Columns& in_cols : layouts) {
            std::vector<float> got(want.size(), nan);
            k->int8_bound_strip(in_rows, n, kp, in_cols, nc, got.data() + offset, ld);
            for (std::size_t e = 0; e < got.size(); ++e) {
              // Bits, NaN included: every entry outside the strip must still be the NaN put
              // there.
              std::uint32_t a, b;
              std::memcpy(&a, &got[e], 4);
              std::memcpy(&b, &want[e], 4);
              ASSERT_EQ(a, b) << "dim " << dim << " rows " << n << " columns " << nc
                              << (in_cols.narrow ? " (narrow)" : "") << " entry " << e << ": "
                              << got[e] << " against " << want[e];
            }
          }
      }
    }
}

}  // namespace
}  // namespace lcrwmd::test
