#pragma once
// A batch of query documents as histograms over the index vocabulary, extended by the words
// the index does not hold but the word vectors given at search time do (an embeddings file, or
// a fastText model, which gives every word a vector).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/index.h"
#include "lcrwmd/method.h"
#include "lcrwmd/text.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {

// The queries' terms, what bm25 reads: every token past the stop words, with a vector or
// without, as text (each query's sorted), how often it occurs, and its BM25 IDF in the
// collection searched (its document frequency over all of it, shards built apart included).
struct QueryTerms {
  std::vector<std::uint64_t> indptr{0};
  std::vector<std::string> terms;
  std::vector<std::uint32_t> counts;
  std::vector<float> idf;
  double mean_length = 0;  // the collection's mean document length in tokens (BM25's avgdl)
};

struct QuerySet {
  std::vector<std::string> ids, labels;
  // CSR histograms. Word id u < index.vocab_size() is an index word; u >= vocab_size() is
  // extra_words[u - vocab_size()] with its vector in extra_vectors.
  std::vector<std::uint64_t> indptr{0};
  std::vector<std::uint32_t> words;  // ascending within each query
  std::vector<float> weights;
  std::vector<std::string> extra_words;
  std::vector<float> extra_vectors;
  QueryTerms terms;  // empty where the index has no terms (lcrwmd/index.h)

  std::size_t size() const { return ids.size(); }
  std::size_t length(std::size_t q) const { return indptr[q + 1] - indptr[q]; }
};

// How a query's words are weighted against each other. The documents keep the index's weighting
// either way.
enum class QueryWeights {
  index,  // as the index weighs its documents (TF or TF-IDF): what "more like this" compares
  idf,    // TF-IDF by the index's document frequencies whatever its weighting: a search box's
          // rare words count for more than its common ones
};
// "index" | "idf" | "auto"; auto is the default for `direction`: idf for query-to-document
// (each query word's own distance is summed, so a rare word must weigh more), index for the
// others (a document compared with a document).
QueryWeights parse_query_weights(std::string_view s, Direction direction);

struct QueryOptions {
  // Looked up for words the index does not hold; without it such words are dropped (and
  // counted as not in the index). They must be the index's own (check_embeddings); an index
  // of unit-length vectors scales them alike.
  const WordVectors* embeddings = nullptr;
  QueryWeights weights = QueryWeights::index;
  // A query none of whose words has a vector is kept, with no words, where it has terms: what a
  // lexical method (MethodInfo::lexical, bm25) ranks by. Otherwise it is excluded.
  bool keep_term_only = false;
};

// Tokenises and weights queries as the index's documents were: its tokenizer, stop words,
// weighting (or IDF, options.weights) and document frequencies (lcrwmd/index.h). Queries left
// with no known word (options.keep_term_only: and no term) are excluded and listed in
// report->empty_documents.
QuerySet make_query_set(const Index& index, const std::vector<RawDocument>& docs,
                        const QueryOptions& options, TextReport* report = nullptr);

// Stop words given at query time (given_name: where they came from) add nothing, since the
// index applies its own; they are allowed only where equal to them, else an Error.
void check_stopwords(const Index& index, const StopWords& given, const std::string& given_name);
// Embeddings given at query time must hold every word of the index with the vector it has:
// else an Error naming both, since words found only there would be measured against vectors
// of another space.
void check_embeddings(const Index& index, const WordVectors& embeddings);
// The word vectors at `path` for queries against `index`, checked as above. An embeddings file:
// with `query_words`, only those and the index's words are kept (memory follows them, not the
// file); without, every word (a service does not know its queries' words in advance). A fastText
// model: all of it, since it answers any word.
std::unique_ptr<WordVectors> load_query_embeddings(const Index& index, const std::string& path,
                                                   const WordSet* query_words);
// The vector `source` gives `word` for queries against `index` (scaled to length 1 where the
// index's are), into out (index.dim() floats); false where it has none.
bool query_word_lookup(const Index& index, const WordVectors& source, std::string_view word,
                       float* out);

// An Error where a query's word is neither the index's nor one of the set's extra words, or the
// set's arrays disagree: queries written over another index. Searchers check it first.
void check_query_words(const Index& index, const QuerySet& queries);

// Queries [begin, end) of a set, with its extra words.
QuerySet subset(const QuerySet& q, std::size_t begin, std::size_t end);

// The queries of several sets, in order, as one (their extra words renumbered after each
// other's): what a service runs as one batch.
QuerySet concat(const Index& index, const std::vector<const QuerySet*>& parts);

// Queries written over index `from` rewritten over index `to`'s vocabulary (the words it lacks
// as extra words, with their vectors): the same queries, for another index of the same
// embeddings (a shard of a collection, lcrwmd/segments.h).
QuerySet translate_queries(const Index& from, const QuerySet& queries, const Index& to);
// Queries that need no index: every word an extra word, with its name and vector (what the
// ranks of a distributed collection exchange, each holding a shard of its own); and such queries
// over an index's vocabulary.
QuerySet portable_queries(const Index& from, const QuerySet& queries);
QuerySet from_portable(const QuerySet& queries, const Index& to);

// Resident documents as queries (for tests, self-similarity and "more like this"). with_terms:
// their terms too, for a method that reads them (MethodInfo::reads_terms), at the cost of one
// pass over every posting of the index; without, the set carries none.
QuerySet query_set_from_index(const Index& index, std::span<const std::size_t> docs,
                              bool with_terms = false);

// The vector of query word u.
inline const float* query_word_vector(const Index& index, const QuerySet& q, std::uint32_t u) {
  return u < index.vocab_size() ? index.vector(u)
                                : q.extra_vectors.data() + (u - index.vocab_size()) * index.dim();
}

}  // namespace lcrwmd
