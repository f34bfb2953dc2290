#pragma once
// Several index files searched as one collection (faiss's IndexShards). Each shard holds a
// contiguous part of the documents with its own compacted vocabulary, so its phase 1 runs over
// the words its documents use, not the whole collection's. `lcrwmd build --shards N` writes one
// build's shards (the whole build's document frequencies in each); indexes built apart from the
// same embeddings, stop words and weighting (TF weighting) join as well, so a collection grows
// by adding a file.
//
//   const Index a = Index::load("corpus.0.idx"), b = Index::load("corpus.1.idx");
//   const ShardSet shards({&a, &b});
//   const QuerySet q = shards.make_query_set(read_tsv("queries.tsv"), {});
//   ShardedSearcher s(shards, {});
//   SearchResults r = s.search(q, 10, {});      // indices into the collection: a's, then b's
//
// Results against the collection equal one index of all its documents: the same neighbours and
// distances, where a query word some shard lacks may move the last bits of that shard's sums
// (the shard adds it after its own words), and with them the order of near-ties. Against the
// same shard files, results are the same bytes however the shards are spread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lcrwmd/collection_statistics.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/string_map.h"

namespace lcrwmd {

class Communicator;

class ShardSet {
 public:
  // The shards, in document order; each must outlive the set. An Error naming the files where
  // they disagree: dimension, weighting, tokenizer, stop words, the vector of a word two of
  // them hold, or (TF-IDF) the document frequencies queries are weighted with.
  explicit ShardSet(std::vector<const Index*> shards);
  // With each shard's deleted documents (its own numbers, ascending: a collection's,
  // lcrwmd/collection.h): the collection is then the live documents, numbered without the
  // deleted ones, and the document frequencies queries are weighted with count only them.
  ShardSet(std::vector<const Index*> shards, std::vector<std::span<const std::uint32_t>> deleted);

  std::size_t size() const { return parts_.size(); }
  const Index& shard(std::size_t s) const { return *parts_[s].index; }
  // Document i of shard s is document first_doc(s) + i of the collection (less the deleted
  // documents before it: collection_doc).
  std::size_t first_doc(std::size_t s) const { return parts_[s].first; }
  std::size_t n_docs() const { return n_docs_; }
  // Shard s's deleted documents (empty: none), and whether any shard has some.
  std::span<const std::uint32_t> deleted(std::size_t s) const { return parts_[s].deleted; }
  bool has_deletions() const { return deletions_; }
  // Shard s's live document i as the collection's document.
  std::size_t collection_doc(std::size_t s, std::size_t i) const;
  // Distinct words over all shards.
  std::size_t vocab_size() const {
    return size() == 1 ? parts_.front().index->vocab_size() : words_.size();
  }
  std::size_t dim() const { return parts_.front().index->dim(); }

  // The shard of the collection's document i, and its index there.
  std::pair<std::size_t, std::size_t> locate(std::size_t doc) const;
  std::string_view doc_id(std::size_t doc) const;
  std::string_view label(std::size_t doc) const;
  std::string text(std::size_t doc) const;
  bool has_text() const;
  std::optional<std::size_t> find_doc(std::string_view id) const;
  // The first shard holding a word, and its id there.
  struct WordPlace {
    std::size_t shard;
    std::uint32_t word;
  };
  std::optional<WordPlace> find_word(std::string_view word) const;

  // Queries for a ShardedSearcher, read as every shard's documents were: the first shard's
  // vocabulary, the words only other shards hold as extra words (with their vectors), words of
  // none from options.embeddings (which check_embeddings should pass for every shard), TF-IDF
  // by the collection's document frequencies.
  QuerySet make_query_set(const std::vector<RawDocument>& docs, const QueryOptions& options,
                          TextReport* report = nullptr) const;
  // The collection's documents `docs` as such queries, each with its own words and weights
  // (query_set_from_index; with_terms: theirs too): "more like this". An Error for a document
  // out of range.
  QuerySet documents_as_queries(std::span<const std::size_t> docs, bool with_terms) const;
  // Such queries over shard s's own vocabulary (the words it lacks as extra words): what its
  // searcher takes.
  QuerySet for_shard(const QuerySet& queries, std::size_t s) const;
  // The same set searched with portable queries (lcrwmd/query.h), each shard's read from them
  // directly (for_shard): what a rank of mpirun holding a run of a collection's segments
  // searches, so that each of its segments reads a query as in one process holding them all
  // (the words it lacks in the same order, hence the same bits).
  ShardSet reading_portable_queries() const;
  bool reads_portable_queries() const { return portable_; }

  // The collection's statistics (lcrwmd/collection_statistics.h): one build's shards answer with
  // the build's (the first's); shards built apart (a collection's segments, files built one by
  // one), or any with deleted documents, with their sums less the deleted documents'.
  CollectionStatistics statistics() const;
  bool built_apart() const;

  // Each shard's id of `term` into ids[s] (kNoTerm where shard s has none): a binary search in
  // the shard with the most terms, and one hash lookup for all the others (their table built
  // on first use), so that a query's terms cost about as much over a big segment and many small
  // ones as over one index (bm25).
  static constexpr std::uint32_t kNoTerm = ~std::uint32_t{0};
  void find_term(std::string_view term, std::span<std::uint32_t> ids) const;

 private:
  struct Where {
    std::uint32_t shard, word;
  };
  void index_words();
  // Each shard, one record: its index, its deleted documents, and the collection's number of its
  // first live document.
  struct Part {
    const Index* index;
    std::span<const std::uint32_t> deleted;
    std::size_t first;
  };
  std::vector<Part> parts_;
  std::size_t n_docs_ = 0;
  bool deletions_ = false, portable_ = false;
  // Each word: the first shard holding it, and its id there (empty for one shard).
  StringMap<Where> words_;
  // With deletions: what the deleted documents add to the shards' counts (of each word, of each
  // term, of tokens), taken off the collection's.
  StringMap<std::uint32_t> deleted_words_, deleted_terms_;
  std::uint64_t deleted_tokens_ = 0;
  // find_term's: the shard with the most terms, and the others' terms (built on first use).
  std::size_t most_terms_ = 0;
  struct TermTable;
  std::shared_ptr<TermTable> terms_;
};

// A Searcher over a ShardSet: a searcher per shard (of one backend), run one after another;
// each shard's top-k merged in the collection's order (ascending distance, ties by the smaller
// document). For WMD and the symmetric relaxations, a shard's search skips documents whose
// lower bound cannot beat the k-th best of the shards before it. A method with a way of its own
// over a collection's segments takes it instead: bm25 scores every shard's postings in one pass
// with one top-k (one index's bytes); the hybrid standardises every shard's distances and
// scores over the whole collection's live documents, as one index of them does (Lucene's
// collection-wide statistics). index() is the first shard (queries are written over its
// vocabulary); n_docs() the collection's.
class ShardedSearcher final : public Searcher {
 public:
  ShardedSearcher(const ShardSet& shards, const SearcherOptions& options);
  ~ShardedSearcher() override;
  Backend backend() const override { return searchers_.front()->backend(); }
  const Index& index() const override { return shards_.shard(0); }
  std::size_t n_docs() const override { return shards_.n_docs(); }

 protected:
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  // rows (part.size() x n_docs()): each shard's distances under `o`, its live columns in the
  // collection's order.
  void live_rows(const QuerySet& part, const SearchOptions& o, float* rows,
                 SearchStats& total) const;

  const ShardSet& shards_;
  std::vector<std::unique_ptr<Searcher>> searchers_;
};

// One part of a collection per rank of a Communicator (mpirun): each rank maps only its own
// files (an index: a shard file or a part of one index; or a run of a collection's segments,
// deletions and all: Collection::open_share), and the ranks answer together for the
// collection of their parts in rank order. A Searcher whose every call is collective: every
// rank makes it, in the same order. Queries are read on rank 0 (make_query_set: portable,
// lcrwmd/query.h; the other ranks' are ignored) and results come back there (empty elsewhere);
// a failure on any rank is an Error on every rank. The results are the bytes a ShardedSearcher
// gives for the same files in one process. Where an exact distance is costly (WMD), the ranks
// first share an estimate of each query's k-th best (each rank's 2k/ranks cheapest candidates,
// solved), and each prunes with it; a method answering from every document's evidence (the
// hybrid) has each rank's rows of it sent to rank 0, which answers from the whole collection's.
class RankShards final : public Searcher {
 public:
  // An Error on every rank where the parts disagree (as ShardSet checks them) or a rank cannot
  // make its searcher. `mine` (the index, or the set) must outlive it.
  RankShards(Communicator& comm, const Index& shard, const SearcherOptions& options);
  RankShards(Communicator& comm, const ShardSet& mine, const SearcherOptions& options);
  ~RankShards() override;
  RankShards(const RankShards&) = delete;
  RankShards& operator=(const RankShards&) = delete;

  std::size_t n_docs() const override { return first_.back(); }
  std::size_t first_doc(int rank) const { return first_[static_cast<std::size_t>(rank)]; }
  // This rank's documents, in the collection from first_doc(rank).
  const ShardSet& mine() const { return *mine_; }

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
  const Index& index() const override { return mine_->shard(0); }
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
  const ShardSet& searched() const { return portable_ ? *portable_ : *mine_; }

  Communicator& comm_;
  std::optional<ShardSet> own_;  // made of the one index this rank was given
  const ShardSet* mine_;
  std::optional<ShardSet> portable_;    // mine_ reading portable queries (unless shared)
  std::unique_ptr<Searcher> searcher_;  // over searched()
  std::vector<std::size_t> first_;      // each rank's first document, then the collection's size
  bool shared_vocabulary_ = false;
};

}  // namespace lcrwmd
