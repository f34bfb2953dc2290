#pragma once
// Synthetic corpora with the paper's shapes: Zipf-distributed word frequencies, Gaussian word
// vectors, documents of about words_per_doc distinct words. Fully determined by the seed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/index.h"

namespace lcrwmd {

struct SynthOptions {
  std::size_t docs = 10000;
  std::size_t vocab = 10000;
  double words_per_doc = 50;  // mean distinct words per document
  std::size_t dim = 300;
  std::uint64_t seed = 1;
  double zipf_exponent = 1.0;
  std::size_t queries = 0;  // extra documents from the same distribution, as TSV text
};

// "set1": 1M docs, h = 107.5, v = 452,058; "set2": 2.8M docs, h = 27.5, v = 292,492; m = 300.
SynthOptions synth_preset(std::string_view name);

struct SynthCorpus {
  IndexData index;                   // vocabulary compacted to the words that occur
  std::vector<RawDocument> queries;  // words repeated by count, all known to the index
};

SynthCorpus synthesize(const SynthOptions& options);

}  // namespace lcrwmd
