#pragma once
// One shard of a collection per rank of mpirun: its part of the documents (an index file, a part
// of one index, or a run of a collection's segments), searched together as one collection of
// the ranks' shards in rank order (lcrwmd/segments.h is the same in one process).
//
//   RankShards ranks(comm, Index::load("corpus." + std::to_string(comm.rank()) + ".idx"), {});
//   const QuerySet q = ranks.make_query_set(rank0_docs, {});
//   SearchResults r = ranks.search(q, 10, {});  // on rank 0; empty elsewhere
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lcrwmd/communicator.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/segments.h"

namespace lcrwmd {

// One part of a collection per rank of a Communicator (mpirun): each rank maps only its own
// files (an index: a shard file or a part of one index; or a run of a collection's segments,
// deletions and all: Collection::open_share), and the ranks answer together for the
// collection of their parts in rank order. A Searcher whose every call is collective: every
// rank makes it, in the same order. Queries are read on rank 0 (make_query_set: portable,
// lcrwmd/query.h; the other ranks' are ignored) and results come back there (empty elsewhere);
// a failure on any rank is an Error on every rank. The results are the bytes a CollectionSearcher
// gives for the same files in one process. Where an exact distance is costly (WMD), the ranks
// first share an estimate of each query's k-th best (each rank's 2k/ranks cheapest candidates,
// solved), and each prunes with it; a method answering from every document's evidence (the
// hybrid) has each rank's rows of it sent to rank 0, which answers from the whole collection's.
class RankShards final : public Searcher {
 public:
  // An Error on every rank where the parts disagree (as SegmentSet checks them) or a rank cannot
  // make its searcher. `mine` (the index, or the set) must outlive it.
  RankShards(Communicator& comm, const Index& shard, const SearcherOptions& options);
  RankShards(Communicator& comm, const SegmentSet& mine, const SearcherOptions& options);
  ~RankShards() override;
  RankShards(const RankShards&) = delete;
  RankShards& operator=(const RankShards&) = delete;

  std::size_t n_docs() const override { return first_.back(); }
  std::size_t first_doc(int rank) const { return first_[static_cast<std::size_t>(rank)]; }
  // This rank's documents, in the collection from first_doc(rank).
  const SegmentSet& mine() const { return *mine_; }

  // Queries read as the collection's documents were (docs: rank 0's, the others give none),
  // each word's vector from the first rank whose part holds it, else from options.embeddings
  // (rank 0's), and weighted by the collection's statistics (lcrwmd/collection_statistics.h:
  // parts built apart sum every rank's). On rank 0 (empty elsewhere): portable
  // (lcrwmd/query.h), or where the ranks' parts share one vocabulary, over it.
  QuerySet make_query_set(const std::vector<RawDocument>& docs, const QueryOptions& options,
                          TextReport* report = nullptr);
  Backend backend() const override { return searcher_->backend(); }
  // This rank's first index (queries are portable: over no index's vocabulary; or over this
  // one's where shares_vocabulary()).
  const Index& index() const override { return mine_->segment(0); }
  // Whether every rank's part is one index with the same vocabulary (words and vectors) and the
  // whole collection's statistics, as the parts of one index file are (Index::shard): then
  // queries are written over it, not made portable.
  bool shares_vocabulary() const { return shared_vocabulary_; }
  // The ids (or texts) of the collection's documents `docs` (rank 0's list), on rank 0.
  std::vector<std::string> doc_ids(const std::vector<std::int64_t>& docs);
  std::vector<std::string> texts(const std::vector<std::int64_t>& docs);

 protected:
  // Every distance of rank 0's queries to the collection's documents, streamed to rank 0's sink
  // a block of rows at a time (each row the ranks' columns side by side).
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  // Top-k of rank 0's queries over the collection, on rank 0 (stats summed over the ranks).
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  // Rank 0's queries on every rank, as its searcher reads them (portable, or over the shared
  // vocabulary).
  QuerySet receive_queries(const QuerySet& queries) const;
  // Each query's ceiling for every rank's pruning, from the k-th best of the ranks' estimates
  // (SearchOptions::estimate), on every rank.
  std::vector<float> shared_ceilings(const QuerySet& queries, std::size_t k,
                                     const SearchOptions& options, SearchStats& stats) const;
  // Rank 0's merge of the ranks' top-k (an Error naming the first rank that failed).
  SearchResults merge(const std::vector<std::string>& parts, std::size_t nq, std::size_t k,
                      SearchStats& total) const;
  void start(const SearcherOptions& options);
  std::vector<std::string> fetch(const std::vector<std::int64_t>& docs, bool text) const;
  // Rows [begin, end) of `queries`'s answer, on rank 0, from every rank's evidence (Evidence:
  // a method answering from every document's).
  std::vector<float> whole_rows(const QuerySet& queries, std::size_t begin, std::size_t end,
                                const SearchOptions& options, SearchStats& stats) const;

  // What its searcher searches: its part, or that reading portable queries.
  const SegmentSet& searched() const { return portable_ ? *portable_ : *mine_; }

  Communicator& comm_;
  std::optional<SegmentSet> own_;  // made of the one index this rank was given
  const SegmentSet* mine_;
  std::optional<SegmentSet> portable_;  // mine_ reading portable queries (unless shared)
  std::unique_ptr<Searcher> searcher_;  // over searched()
  std::vector<std::size_t> first_;      // each rank's first document, then the collection's size
  bool shared_vocabulary_ = false;
};

}  // namespace lcrwmd
