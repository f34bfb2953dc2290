#pragma once
// A collection searched as one, in one process: its segments, each an index file holding a
// contiguous part of the documents with its own compacted vocabulary, so that its phase 1 runs
// over the words its documents use, not the whole collection's (Lucene's segments; faiss's
// IndexShards). The segments are a collection's (lcrwmd/collection.h, with their deletions) or
// index files given together: `lcrwmd build --shards N` writes one build's (the whole build's
// document frequencies in each), and indexes built apart from the same embeddings, stop words
// and weighting (TF weighting) join as well. One word for each: a segment is a part of a
// collection in one process; a shard is what one of mpirun's ranks holds (lcrwmd/rank_shards.h),
// which may be a file of `--shards N` or a run of a collection's segments.
//
//   const Index a = Index::load("corpus.0.idx"), b = Index::load("corpus.1.idx");
//   const SegmentSet segments({&a, &b});
//   const QuerySet q = segments.make_query_set(read_tsv("queries.tsv"), {});
//   CollectionSearcher s(segments, {});
//   SearchResults r = s.search(q, 10, {});      // indices into the collection: a's, then b's
//
// Results against the collection equal one index of all its documents: the same neighbours and
// distances, where a query word some segment lacks may move the last bits of that segment's sums
// (the segment adds it after its own words), and with them the order of near-ties. Against the
// same segment files, results are the same bytes however they are spread over mpirun's ranks.
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

class SegmentSet {
 public:
  // The segments, in document order; each must outlive the set. An Error naming the files where
  // they disagree: dimension, weighting, tokenizer, stop words, the vector of a word two of
  // them hold, or (TF-IDF) the document frequencies queries are weighted with.
  explicit SegmentSet(std::vector<const Index*> segments);
  // With each segment's deleted documents (its own numbers, ascending: a collection's,
  // lcrwmd/collection.h): the collection is then the live documents, numbered without the
  // deleted ones, and the document frequencies queries are weighted with count only them.
  // earlier: a set of an earlier commit of the same collection, whose checks of the segments
  // both hold (the same Index objects) are not made again: a new set costs what changed.
  SegmentSet(std::vector<const Index*> segments,
             std::vector<std::span<const std::uint32_t>> deleted,
             const SegmentSet* earlier = nullptr);

  std::size_t size() const { return parts_.size(); }
  const Index& segment(std::size_t s) const { return *parts_[s].index; }
  // Document i of segment s is document first_doc(s) + i of the collection (less the deleted
  // documents before it: collection_doc).
  std::size_t first_doc(std::size_t s) const { return parts_[s].first; }
  std::size_t n_docs() const { return n_docs_; }
  // Segment s's deleted documents (empty: none), and whether any segment has some.
  std::span<const std::uint32_t> deleted(std::size_t s) const { return parts_[s].deleted; }
  bool has_deletions() const { return deletions_; }
  // Segment s's live document i as the collection's document.
  std::size_t collection_doc(std::size_t s, std::size_t i) const;
  // Distinct words over all segments.
  std::size_t vocab_size() const;  // counted on first use
  std::size_t dim() const { return parts_.front().index->dim(); }

  // The segment of the collection's document i, and its index there.
  std::pair<std::size_t, std::size_t> locate(std::size_t doc) const;
  std::string_view doc_id(std::size_t doc) const;
  std::string_view label(std::size_t doc) const;
  std::string text(std::size_t doc) const;
  bool has_text() const;
  std::optional<std::size_t> find_doc(std::string_view id) const;
  // The first segment holding a word, and its id there.
  struct WordPlace {
    std::size_t segment;
    std::uint32_t word;
  };
  std::optional<WordPlace> find_word(std::string_view word) const;

  // Queries for a CollectionSearcher, read as every segment's documents were: the first segment's
  // vocabulary, the words only other segments hold as extra words (with their vectors), words of
  // none from options.embeddings (which check_embeddings should pass for every segment), TF-IDF
  // by the collection's document frequencies.
  QuerySet make_query_set(const std::vector<RawDocument>& docs, const QueryOptions& options,
                          TextReport* report = nullptr) const;
  // The collection's documents `docs` as such queries, each with its own words and weights
  // (query_set_from_index; with_terms: theirs too): "more like this". An Error for a document
  // out of range.
  QuerySet documents_as_queries(std::span<const std::size_t> docs, bool with_terms) const;
  // Such queries over segment s's own vocabulary (the words it lacks as extra words): what its
  // searcher takes.
  QuerySet for_segment(const QuerySet& queries, std::size_t s) const;
  // The same set searched with portable queries (lcrwmd/query.h), each segment's read from them
  // directly (for_segment): what a rank of mpirun holding a run of a collection's segments
  // searches, so that each of its segments reads a query as in one process holding them all
  // (the words it lacks in the same order, hence the same bits).
  SegmentSet reading_portable_queries() const;
  bool reads_portable_queries() const { return portable_; }

  // The collection's statistics (lcrwmd/collection_statistics.h): one build's segments answer with
  // the build's (the first's); segments built apart (a collection's segments, files built one by
  // one), or any with deleted documents, with their sums less the deleted documents'.
  CollectionStatistics statistics() const;
  bool built_apart() const;

  // Each segment's id of `term` into ids[s] (kNoTerm where segment s has none): a binary search in
  // the segment with the most terms, and one hash lookup for all the others (their table built
  // on first use), so that a query's terms cost about as much over a big segment and many small
  // ones as over one index (bm25).
  static constexpr std::uint32_t kNoTerm = ~std::uint32_t{0};
  void find_term(std::string_view term, std::span<std::uint32_t> ids) const;

 private:
  // An Error where a segment disagrees with the others (ShardSignature; a word's vector, a
  // TF-IDF document frequency), each segment not in `earlier` checked.
  void check_agreement(const SegmentSet* earlier) const;
  // Each segment, one record: its index, its deleted documents, and the collection's number of its
  // first live document.
  struct Part {
    const Index* index;
    std::span<const std::uint32_t> deleted;
    std::size_t first;
  };
  std::vector<Part> parts_;
  std::size_t n_docs_ = 0;
  bool deletions_ = false, portable_ = false;
  // The deleted documents' tokens, taken off the collection's (each word's and term's deleted
  // documents are counted as a query asks for them: statistics()).
  std::uint64_t deleted_tokens_ = 0;
  struct WordCount;  // vocab_size's
  std::shared_ptr<WordCount> words_;
  // find_term's: the segment with the most terms, and the others' terms (built on first use).
  std::size_t most_terms_ = 0;
  struct TermTable;
  std::shared_ptr<TermTable> terms_;
};

// A Searcher over a SegmentSet: a searcher per segment (of one backend), run one after another;
// each segment's top-k merged in the collection's order (ascending distance, ties by the smaller
// document). For WMD and the symmetric relaxations, a segment's search skips documents whose
// lower bound cannot beat the k-th best of the segments before it. A method with a way of its own
// over a collection's segments takes it instead: bm25 scores every segment's postings in one pass
// with one top-k (one index's bytes); the hybrid standardises every segment's distances and
// scores over the whole collection's live documents, as one index of them does (Lucene's
// collection-wide statistics). index() is the first segment (queries are written over its
// vocabulary); n_docs() the collection's.
class CollectionSearcher final : public Searcher {
 public:
  // earlier: a searcher of an earlier commit of the same collection, whose searchers of the
  // segments both hold (the same Index objects) are shared rather than made again, with what
  // they built (phase 1's vocabulary in the precision asked, a GPU's uploads).
  CollectionSearcher(const SegmentSet& segments, const SearcherOptions& options,
                     const CollectionSearcher* earlier = nullptr);
  ~CollectionSearcher() override;
  Backend backend() const override { return searchers_.front()->backend(); }
  const Index& index() const override { return segments_.segment(0); }
  std::size_t n_docs() const override { return segments_.n_docs(); }

 protected:
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  // rows (part.size() x n_docs()): each segment's distances under `o`, its live columns in the
  // collection's order.
  void live_rows(const QuerySet& part, const SearchOptions& o, float* rows,
                 SearchStats& total) const;

  const SegmentSet& segments_;
  std::vector<std::shared_ptr<const Searcher>> searchers_;
};

}  // namespace lcrwmd
