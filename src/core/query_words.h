#pragma once
// make_query_set's one path (lcrwmd/query.h), for the words of one index and, beyond them,
// words found elsewhere: embeddings given at query time, or the other shards of a collection
// (lcrwmd/segments.h).
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "lcrwmd/collection_statistics.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

// A word beyond the index: its vector (dim floats, valid while the query set is made) and the
// documents that hold it (for TF-IDF; 0 where it comes from embeddings alone).
struct ExtraWord {
  const float* vector;
  std::size_t doc_freq;
};
// Where a token the index lacks is looked for before the embeddings (the other shards of a
// collection); empty: nowhere.
using FindExtraWord = std::function<std::optional<ExtraWord>(std::string_view)>;

// An index's own statistics (a shard of one build: the whole build's); no term_docs where it
// keeps no terms.
CollectionStatistics statistics_of(const Index& index);

// An Error where query-time embeddings do not have the index's dimension.
void check_query_embeddings_dim(const Index& index, const WordVectors* embeddings);

// Queries tokenised and weighted as the index's documents were (or by IDF: `weights`), by the
// collection's statistics: --query-weights idf by stats.word_docs over stats.docs where given
// (the sums over segments built apart), else TF-IDF by the index's idf_docs and its or
// `elsewhere`'s document frequencies; their terms by stats.term_docs (none: they carry no IDF,
// and bm25 refuses them). A token the index lacks is looked for with `elsewhere`, then in
// `embeddings` (an Error where their dimension is not the index's). Without embeddings, the
// tokens nowhere to be found are reported as not in the index (embeddings might hold them), not
// as without a vector.
QuerySet make_query_set_with(const Index& index, const std::vector<RawDocument>& docs,
                             const FindExtraWord& elsewhere, const QueryOptions& options,
                             TextReport* report, const CollectionStatistics& stats);

}  // namespace lcrwmd
