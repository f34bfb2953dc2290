#pragma once
// One index on every rank of a Communicator (each maps the same file), the queries spread: each
// rank searches a part of rank 0's queries against all the documents. Many queries against a
// collection every node can hold: no rank repeats another's work, where spreading the documents
// (RankShards over Index::shard) has every rank run phase 1 for every query.
//
//   RankQueries ranks(comm, Index::load("corpus.idx"), {});
//   SearchResults r = ranks.search(queries, 10, {});  // on rank 0; empty elsewhere
//
// Every call is collective: every rank makes it, in the same order. Queries are rank 0's (the
// other ranks' are ignored), written over the index's vocabulary; results and rows come back to
// rank 0 in query order, the bytes one process gives. A failure on any rank is an Error on
// every rank.
#include <cstddef>
#include <memory>

#include "lcrwmd/communicator.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"

namespace lcrwmd {

class RankQueries final : public Searcher {
 public:
  // An Error on every rank where a rank cannot make its searcher or the ranks' indexes differ
  // in size, vocabulary or dimension.
  RankQueries(Communicator& comm, const Index& index, const SearcherOptions& options);
  ~RankQueries() override;

  Backend backend() const override { return searcher_->backend(); }
  const Index& index() const override { return index_; }
  std::size_t n_docs() const override { return index_.n_docs(); }

 protected:
  // Every distance of rank 0's queries, streamed to rank 0's sink in query order: the ranks
  // compute consecutive blocks of rows, one each per round.
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  // Top-k of rank 0's queries, on rank 0 (stats summed over the ranks).
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  QuerySet receive_queries(const QuerySet& queries) const;

  Communicator& comm_;
  const Index& index_;
  std::unique_ptr<Searcher> searcher_;
};

}  // namespace lcrwmd
