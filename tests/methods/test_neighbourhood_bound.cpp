// D2's neighbourhood bound (methods/lc_rwmd/neighbourhood_bound.h): each batch word's least bounds
// kept whatever order the strips come in, and a bound of D2 that is never above it (a direct
// computation in double), equal to the nearest word's bound on one-word documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/batch_words.h"
#include "lcrwmd/index.h"
#include "methods/lc_rwmd/neighbourhood_bound.h"
#include "methods/lc_rwmd/phase1.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Rows of a (vocabulary x columns) matrix of bounds, lo[u * columns + c], handed to two
// NearestWords in strips of 1..kStripRows rows in a random order, then merged and sorted.
NearestWords nearest_of(const std::vector<float>& lo, std::size_t v, std::size_t columns,
                        unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::pair<std::size_t, std::size_t>> strips;  // (first row, rows)
  for (std::size_t u = 0; u < v;) {
    const std::size_t rows = std::min<std::size_t>(1 + rng() % kStripRows, v - u);
    strips.emplace_back(u, rows);
    u += rows;
  }
  std::shuffle(strips.begin(), strips.end(), rng);
  NearestWords a(columns), b(columns);
  std::vector<float> strip(columns * kStripRows, -7.0f);  // stale rows past each strip's end
  for (std::size_t s = 0; s < strips.size(); ++s) {
    const auto [u0, rows] = strips[s];
    for (std::size_t c = 0; c < columns; ++c)
      for (std::size_t r = 0; r < kStripRows; ++r)
        strip[c * kStripRows + r] = r < rows ? lo[(u0 + r) * columns + c] : -7.0f;
    (s % 2 ? a : b).add_strip(u0, rows, strip.data(), kStripRows);
  }
  a.merge(b);
  a.sort();
  return a;
}

TEST(NearestWords, KeepsTheLeastBoundsWhateverTheOrderOfTheStrips) {
  std::mt19937 rng(5);
  for (const std::size_t v : {std::size_t{3}, NearestWords::kKept, std::size_t{500}}) {
    const std::size_t columns = 9;
    std::vector<float> lo(v * columns);
    for (float& x : lo) x = static_cast<float>(rng() % 1000) / 100.0f - 0.5f;  // ties, < 0
    lo[2 * columns + 1] = std::numeric_limits<float>::quiet_NaN();             // passed over
    for (unsigned seed : {1u, 2u, 3u}) {
      const NearestWords got = nearest_of(lo, v, columns, seed);
      for (std::size_t c = 0; c < columns; ++c) {
        std::vector<float> want;
        for (std::size_t u = 0; u < v; ++u)
          if (!std::isnan(lo[u * columns + c])) want.push_back(lo[u * columns + c]);
        std::sort(want.begin(), want.end());
        want.resize(std::min(want.size(), NearestWords::kKept));
        const auto e = got.of(c);
        ASSERT_EQ(e.size(), want.size()) << v << " " << c;
        for (std::size_t i = 0; i < e.size(); ++i) {
          EXPECT_EQ(e[i].lo, want[i]) << v << " " << c << " " << i;
          EXPECT_EQ(lo[e[i].word * columns + c], e[i].lo);  // the word that has that bound
          if (i > 0 && e[i].lo == e[i - 1].lo) {
            EXPECT_LT(e[i - 1].word, e[i].word);
          }
        }
        // The nearest other word: the least bound of every word but one.
        for (const std::int64_t self : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{2}}) {
          float least = kInf;
          for (std::size_t u = 0; u < v; ++u)
            if (static_cast<std::int64_t>(u) != self) least = std::min(least, lo[u * columns + c]);
          EXPECT_EQ(got.nearest_other(c, self), least) << v << " " << c << " " << self;
        }
      }
    }
  }
}

// A corpus with one one-word document per vocabulary word beside random ones, queries with
// words the index lacks; phase 1's bounds stood in for by the squared distances lowered a
// little (any lower bound will do).
TEST(NeighbourhoodBound, NeverAboveD2AndTheNearestBoundOnOneWordDocuments) {
  for (const std::size_t vocab : {std::size_t{12}, std::size_t{20}, std::size_t{150}}) {
    IndexData d = test::random_index(40, vocab, 5, 9, 71);
    for (std::size_t u = 0; u < vocab; ++u) {
      d.indices.push_back(static_cast<std::uint32_t>(u));
      d.values.push_back(1.0f);
      ++d.doc_freq[u];
      d.indptr.push_back(d.indices.size());
      d.ids.push_back(test::numbered('o', u));
      d.labels.emplace_back("c0");
    }
    const Index ix = Index::from_data(std::move(d));
    const QuerySet qs = test::mixed_queries(ix, 10, 72);
    const BatchWords batch(ix, qs, 0, qs.size());
    const std::size_t v = ix.vocab_size(), w = batch.words.size(), m = ix.dim();
    std::vector<double> dist(v * w);  // the distances in double
    std::vector<float> lo(v * w);
    for (std::size_t u = 0; u < v; ++u)
      for (std::size_t c = 0; c < w; ++c) {
        double s = 0;
        for (std::size_t k = 0; k < m; ++k) {
          const double x = double{ix.vector(u)[k]} - batch.vectors[c * m + k];
          s += x * x;
        }
        dist[u * w + c] = std::sqrt(s);
        lo[u * w + c] = static_cast<float>(s * (1.0 - 1e-5)) - 1e-7f;
      }
    const NearestWords nearest = nearest_of(lo, v, w, 73);
    const NeighbourhoodBound bound(ix, {qs, 0, qs.size()}, batch, nearest);
    std::size_t tight = 0;
    for (std::size_t j = 0; j < qs.size(); ++j) {
      const float* f = qs.weights.data() + qs.indptr[j];
      const std::uint64_t c0 = batch.cols_indptr[j], h = batch.cols_indptr[j + 1] - c0;
      for (std::size_t doc = 0; doc < ix.n_docs(); ++doc) {
        double d2 = 0;  // sum_t F_t min_{u in doc} c(t, u)
        for (std::size_t t = 0; t < h; ++t) {
          double least = std::numeric_limits<double>::infinity();
          for (const std::uint32_t u : ix.doc_words(doc))
            least = std::min(least, dist[u * w + batch.cols[c0 + t]]);
          d2 += f[t] * least;
        }
        const float got = bound.lower(j, doc);
        ASSERT_GE(got, 0.0f);
        ASSERT_LE(got, d2) << "query " << j << " document " << doc;
        if (h != 1 || ix.doc_words(doc).size() != 1) continue;
        // One word against one: the word's own bound where it is among the neighbours, else
        // the neighbourhood's edge (kept as the next bound), less the slack.
        const std::uint32_t c = batch.cols[c0], u = ix.doc_words(doc)[0];
        const auto e = nearest.of(c);
        const bool inside = std::any_of(
            e.begin(), e.begin() + static_cast<std::ptrdiff_t>(std::min(e.size(), kNeighbours)),
            [&](const NearestWords::Entry& x) { return x.word == u; });
        const float want = std::sqrt(std::max(0.0f, inside ? lo[u * w + c] : e.back().lo));
        EXPECT_NEAR(got, want, 1e-3 * want + 1e-6) << "query " << j << " word " << u;
        ++tight;
      }
    }
    EXPECT_GE(tight, vocab);  // the one-word query met every one-word document
  }
}

}  // namespace
}  // namespace lcrwmd
