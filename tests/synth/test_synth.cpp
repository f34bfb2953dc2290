// The synthetic corpora of the paper's shapes: sizes, determinism, a valid compacted index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/synth.h"

namespace lcrwmd {
namespace {

SynthOptions small() {
  SynthOptions o;
  o.docs = 300;
  o.vocab = 2000;
  o.words_per_doc = 20;
  o.dim = 8;
  o.queries = 7;
  return o;
}

TEST(Synth, ShapesAndAValidIndex) {
  const SynthCorpus c = synthesize(small());
  const IndexData& d = c.index;
  ASSERT_EQ(d.indptr.size(), 301u);
  EXPECT_EQ(d.ids.size(), 300u);
  EXPECT_EQ(c.queries.size(), 7u);
  EXPECT_EQ(d.vectors.size(), d.vocab.size() * 8);
  EXPECT_LE(d.vocab.size(), 2000u);
  const double mean = static_cast<double>(d.indices.size()) / 300.0;
  EXPECT_NEAR(mean, 20.0, 4.0);  // h/2 .. 3h/2 distinct words
  std::vector<bool> used(d.vocab.size(), false);
  for (std::size_t i = 0; i < 300; ++i) {
    double total = 0;
    for (std::uint64_t p = d.indptr[i]; p < d.indptr[i + 1]; ++p) {
      ASSERT_LT(d.indices[p], d.vocab.size());
      if (p > d.indptr[i]) {
        ASSERT_LT(d.indices[p - 1], d.indices[p]) << "ascending, distinct within a document";
      }
      used[d.indices[p]] = true;
      total += d.values[p];
    }
    ASSERT_NEAR(total, 1.0, 1e-5) << "L1-normalised weights, document " << i;
  }
  // Compacted: every vocabulary word occurs.
  EXPECT_EQ(std::count(used.begin(), used.end(), true), static_cast<long>(used.size()));
  // Loads as an index, and its queries use only words it holds.
  const Index ix = Index::from_data(IndexData(d));
  TextReport report;
  const QuerySet q = make_query_set(ix, c.queries, {}, &report);
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(report.unknown_tokens, 0u);
}

TEST(Synth, SameSeedSameCorpusOtherSeedAnother) {
  const SynthCorpus a = synthesize(small()), b = synthesize(small());
  EXPECT_EQ(a.index.indices, b.index.indices);
  EXPECT_EQ(a.index.vectors, b.index.vectors);
  SynthOptions o = small();
  o.seed = 2;
  EXPECT_NE(synthesize(o).index.indices, a.index.indices);
}

TEST(Synth, PresetsHaveThePapersShapes) {
  const SynthOptions s1 = synth_preset("set1"), s2 = synth_preset("set2");
  EXPECT_EQ(s1.docs, 1000000u);
  EXPECT_DOUBLE_EQ(s1.words_per_doc, 107.5);
  EXPECT_EQ(s2.docs, 2800000u);
  EXPECT_DOUBLE_EQ(s2.words_per_doc, 27.5);
  EXPECT_EQ(s1.dim, 300u);
  EXPECT_THROW(synth_preset("set3"), Error);
}

}  // namespace
}  // namespace lcrwmd
