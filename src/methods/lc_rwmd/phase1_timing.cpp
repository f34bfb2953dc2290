#include "methods/lc_rwmd/phase1_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>

#include "core/batch_words.h"
#include "methods/lc_rwmd/phase1.h"

namespace lcrwmd {

namespace {

// A vocabulary of 4,096 words: each pass takes a fraction of a millisecond and the whole
// measurement about 70 ms on a Zen 5 (most of it making the sample), once per process, while its
// rounded rows (1.3 MB in int8, twice that in bf16) leave the L2 cache as a real vocabulary's do. A
// query of 16 words lies between a typed query and a short document.
constexpr std::size_t kWords = 4096, kQueryWords = 16;
constexpr int kPasses = 7;

// kWords words of random 300-d vectors, each the one word of a document of its own (what an
// index needs around a vocabulary, at the least cost).
IndexData sample_vocabulary() {
  IndexData d;
  d.dim = 300;
  std::minstd_rand rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  d.vectors.resize(kWords * d.dim);
  for (float& x : d.vectors) x = uniform(rng);
  for (std::size_t u = 0; u < kWords; ++u) {
    char name[16];
    std::snprintf(name, sizeof name, "w%05zu", u);  // equal document counts: bytewise order
    d.vocab.emplace_back(name);
    d.ids.emplace_back(name);
    d.labels.emplace_back();
    d.indices.push_back(static_cast<std::uint32_t>(u));
    d.values.push_back(1.0f);
    d.indptr.push_back(u + 1);
  }
  d.doc_freq.assign(kWords, 1);
  return d;
}

// One precision's phase 1 over the sample, ready to time.
struct Pass {
  Pass(const Index& index, const BatchWords& batch, Precision p)
      : gemm(index, p),
        tiles(index, Phase1{gemm, 0, 0}, batch),
        ws(tiles, tiles.rows(), !tiles.strips_alone()),
        strip(batch.words.size() * kStripRows) {}

  double run() {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t words = strip.size() / kStripRows;
    for (std::size_t t = 0; t < tiles.n_tiles(); ++t) {
      const std::size_t u0 = tiles.first_row(t), rows = tiles.rows_in(t);
      if (!tiles.strips_alone()) tiles.estimate(ws, u0, rows, 0, words);
      for (std::size_t r0 = 0; r0 < rows; r0 += kStripRows)
        tiles.bound_strip(ws, u0, r0, std::min(kStripRows, rows - r0), strip.data(), kStripRows);
      sink += strip[0];
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  cpu::WordGemm gemm;
  Phase1Tiles tiles;
  Phase1Tiles::Workspace ws;
  std::vector<float> strip;
  float sink = 0;  // keeps the bounds read
};

}  // namespace

std::vector<Phase1Timing> time_phase1(std::span<const Precision> precisions) {
  const Index index = Index::from_data(sample_vocabulary());
  QuerySet query;
  query.ids = {"q"};
  query.labels = {""};
  query.indptr = {0, kQueryWords};
  // Words spread over the vocabulary, as a query's are over its frequencies.
  for (std::size_t i = 0; i < kQueryWords; ++i)
    query.words.push_back(static_cast<std::uint32_t>(i * index.vocab_size() / kQueryWords));
  query.weights.assign(kQueryWords, 1.0f / kQueryWords);
  const BatchWords batch(index, query, 0, 1);

  std::vector<std::unique_ptr<Pass>> passes;
  std::vector<Phase1Timing> out;
  for (const Precision p : precisions) {
    passes.push_back(std::make_unique<Pass>(index, batch, p));
    passes.back()->run();  // oneDNN makes its kernel on the first call
    out.push_back({p, std::numeric_limits<double>::infinity()});
  }
  for (int i = 0; i < kPasses; ++i)
    for (std::size_t c = 0; c < passes.size(); ++c)
      out[c].ms = std::min(out[c].ms, passes[c]->run());
  return out;
}

const std::vector<Phase1Timing>& low_precisions() {
  static const std::vector<Phase1Timing> timed = [] {
    std::vector<Precision> have;
    for (const Precision p : {Precision::int8, Precision::bf16})
      if (cpu::missing_instructions(p).empty()) have.push_back(p);
    if (have.size() > 1) return time_phase1(have);
    std::vector<Phase1Timing> one;
    for (const Precision p : have) one.push_back({p, 0.0});
    return one;
  }();
  return timed;
}

}  // namespace lcrwmd
