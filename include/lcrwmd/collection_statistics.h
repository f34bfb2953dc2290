#pragma once
// What scoring one segment as part of a whole collection needs of all the others (Lucene's
// CollectionStatistics and TermStatistics, tantivy's Bm25StatisticsProvider): how many live
// documents there are, their tokens together, and how many of them hold a term (bm25's IDF and
// mean length) or a word (--query-weights idf). An index answers for itself (a shard of one
// build: for the whole build, Index::idf_docs), a set of segments for all of them less their
// deleted documents (SegmentSet::statistics), mpirun's ranks with every rank's sums (RankShards).
// Queries are weighted with them when they are read (lcrwmd/query.h: QueryTerms::idf,
// mean_length, the words' weights), so each segment's searcher scores them as one index of the
// whole collection would.
#include <cstddef>
#include <functional>
#include <string_view>

namespace lcrwmd {

struct CollectionStatistics {
  std::size_t docs = 0;  // live documents
  double tokens = 0;     // their tokens together
  // Live documents holding a term (empty: the documents keep no terms, so bm25 has none).
  std::function<std::size_t(std::string_view)> term_docs = {};
  // Live documents holding a word, summed over segments built apart (empty: each index's own,
  // or the first that holds it: one build's shards all hold the build's).
  std::function<std::size_t(std::string_view)> word_docs = {};
};

}  // namespace lcrwmd
