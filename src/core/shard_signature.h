#pragma once
// What two indexes must agree on to be shards of one collection, said once for the shards of one
// process (SegmentSet) and for the shards of mpirun's ranks (RankShards, which send it).
#include <cstdint>
#include <string>
#include <vector>

#include "lcrwmd/index.h"

namespace lcrwmd {

struct ShardSignature {
  std::string source;
  std::uint64_t n_docs = 0, dim = 0, idf_docs = 0;
  Weighting weighting = Weighting::tf;
  std::uint32_t tokenizer = 0;
  std::vector<std::string> stopwords;  // sorted
  // Its vocabulary: size and fingerprint (words and vectors). Shards of one index file
  // (Index::shard) share it, so queries over one of them fit all.
  std::uint64_t vocab_size = 0, vocabulary = 0;
  // How query vectors are made: scaled to length 1 or not, then mapped by which metric (its
  // fingerprint; 0: none).
  std::uint32_t unit_vectors = 0;
  std::uint64_t metric = 0;

  static ShardSignature of(const Index& ix) {
    return {ix.source(),
            ix.n_docs(),
            ix.dim(),
            ix.idf_docs(),
            ix.weighting(),
            ix.tokenizer_version(),
            ix.stopwords().sorted(),
            ix.vocab_size(),
            ix.embeddings_fingerprint(),
            ix.unit_vectors() ? 1u : 0u,
            ix.metric() ? ix.metric()->fingerprint() : 0};
  }
  bool same_vocabulary(const ShardSignature& o) const {
    return vocab_size == o.vocab_size && vocabulary == o.vocabulary;
  }
};

// Why `b` cannot join `a`'s collection (naming both), or empty.
inline std::string shard_disagreement(const ShardSignature& a, const ShardSignature& b) {
  const std::string both = b.source + " and " + a.source;
  if (a.dim != b.dim)
    return both + ": vectors of dimension " + std::to_string(b.dim) + " and " +
           std::to_string(a.dim) + ": not shards of one collection";
  if (a.weighting != b.weighting)
    return both + ": weighted by " + to_string(b.weighting) + " and " + to_string(a.weighting) +
           ": build them alike";
  if (a.unit_vectors != b.unit_vectors)
    return both + ": one has its vectors scaled to length 1, the other not: build them alike";
  if (a.metric != b.metric)
    return both + ": built with different learned metrics (or one without): build them alike";
  if (a.tokenizer != b.tokenizer)
    return both + ": tokenized by different lcrwmd versions: rebuild them";
  if (a.stopwords != b.stopwords)
    return both + ": built with different stop words: build them alike";
  if (a.weighting == Weighting::tfidf && a.idf_docs != b.idf_docs)
    return both + ": TF-IDF over " + std::to_string(b.idf_docs) + " and " +
           std::to_string(a.idf_docs) +
           " documents: indexes built apart weigh words by their own documents; build them as "
           "one build's shards (lcrwmd build --shards N)";
  return {};
}

}  // namespace lcrwmd
