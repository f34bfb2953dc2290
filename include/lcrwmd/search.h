#pragma once
// Distances between a batch of queries and every resident document, and top-k search, behind
// one interface for every backend (faiss's Index): a Searcher holds the documents (on a GPU,
// a resident copy of them) and answers many searches. The backends: lcrwmd/cpu.h and
// lcrwmd/gpu.h; lcrwmd/searcher.h makes the one asked for.
//
//   Index index = Index::load("corpus.idx");
//   QuerySet q = make_query_set(index, read_tsv("queries.tsv"), {});
//   CpuSearcher cpu(index);                       // or make_searcher (lcrwmd/searcher.h)
//   SearchResults r = cpu.search(q, 10, {});      // symmetric LC-RWMD, top 10
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/method.h"
#include "lcrwmd/precision.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

enum class Backend {
  cpu,        // BLAS + threads
  cuda,       // one NVIDIA GPU (lcrwmd/gpu.h); an error where there is none
  automatic,  // the GPU where one is present and the method runs there (all but wmd)
};
const char* to_string(Backend b);
Backend parse_backend(std::string_view s);  // "cpu" | "cuda" | "auto"

struct SearchOptions {
  // What is measured, and its parameters by name as its description names them (lcrwmd/method.h:
  // act_steps, bm25_k1, ...; one not set takes its default). Where none is named: the symmetric
  // distance of documents (default_method(QueryKind::document)).
  Method method = default_method(QueryKind::document);
  ParameterValues parameters;
  // The relaxations: symmetric D = max(D1, D2), or one of its sides (lcrwmd/method.h). WMD and
  // WCD are symmetric only.
  Direction direction = Direction::symmetric;
  // Queries that share one phase-1 pass (one GEMM against all their distinct words), at most;
  // 0: as many as the backend's memory budget holds (bulk search is fastest in large batches;
  // the CPU's LC-RWMD stops at 65,536 query words, a pruned top-k at 32,768, past which
  // larger ones run slower).
  std::size_t batch = 0;
  // Top-k of a bounded method (symmetric LC-RWMD, WMD): compute the exact distance only for
  // documents whose lower bound still beats the k-th best; the results are the same. (bm25's
  // top-k always reads only the postings that can enter it, with the same results.)
  bool prune = true;
  // Top-k: per query (empty: none), a distance its neighbours must stay under to matter (the
  // k-th best of documents that win ties against these, as earlier shards' do): a bounded
  // method may leave out documents whose lower bound is at least it.
  std::span<const float> ceilings;
  // Documents to leave out (ascending), as if the index did not hold them: never in a top-k,
  // not in the hybrid's standardisation (a distance matrix still has their columns). A
  // collection's deleted documents (CollectionSearcher sets each shard's). The CPU's searcher
  // never computes their exact distances; another searches k + their number and drops them.
  std::span<const std::uint32_t> skip;
  // Top-k: only documents at most this far (a range search, faiss's range_search; k still caps
  // each row). A bounded method computes exact distances only where its bound is within it.
  float max_distance = std::numeric_limits<float>::infinity();
  // Top-k of a bounded method: stop once each query has this many exact distances (0: never,
  // at most k) and return those, the cheapest candidates first. Not the top-k: real documents'
  // distances, whose k-th bounds the k-th best from above (what shards on several ranks share
  // before each refines alone).
  std::size_t estimate = 0;
  // Called after each batch with (queries done, queries in all); for progress reports.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct SearchStats {
  std::size_t batches = 0;
  std::size_t distances = 0;  // query-document pairs bounded or computed
  std::size_t refined = 0;    // pairs whose exact distance was computed from a bound:
                              // D2 for symmetric LC-RWMD, an EMD solve for WMD
  std::size_t tightened = 0;  // WMD: tighter bounds computed (a pair's EMD dual bound)
  std::size_t walked = 0;     // queries whose top-k a threshold walk found (query-to-document)
  // CPU phase 1: (vocabulary word, query) pairs it bounded, and the word distances recomputed
  // from the vectors for them (the candidates the bounds left; an LC-RWMD top-k recomputes
  // only those of the documents it refines).
  std::size_t word_pairs = 0;
  std::size_t recomputed = 0;
  Precision precision = Precision::automatic;  // what phase 1 ran at (automatic: no phase 1)
  Backend backend = Backend::cpu;              // where the distances were computed
  std::size_t device_chunks = 0;  // CUDA: resident chunks the documents were split into
};

// Adds one search's counts (of a shard, a rank) to a total.
void accumulate(SearchStats& total, const SearchStats& part);

// Row q holds the k' = min(k, n_docs) nearest documents of query q, best first: ascending
// distance, ties broken by the smaller document index.
struct SearchResults {
  std::size_t n_queries = 0;
  std::size_t k = 0;
  std::vector<float> distances;       // n_queries x k
  std::vector<std::int64_t> indices;  // n_queries x k
};

// Results of n_queries rows of k, every place empty (index -1, distance 0) until filled.
SearchResults empty_results(std::size_t n_queries, std::size_t k);

// "More like this": results searched for documents of the index as queries with k + 1
// neighbours, each row without its own document (self[q], or the row's last where it is not
// among them), k to a row.
SearchResults without_self(const SearchResults& r, std::span<const std::int64_t> self,
                           std::size_t k);

// The full distance matrix, streamed batch by batch: sink(first_query, n_rows, rows) with
// rows[r * n_docs + i] the distance of query first_query + r to document i.
using RowSink = std::function<void(std::size_t, std::size_t, const float*)>;

// The rules every searcher, explain and front end applies before any work: k is at least 1; a
// direction the method lacks is refused, never silently made symmetric; each parameter is the
// method's and within what its description allows (check_parameters).
void check_k(std::size_t k);
void check_options(const SearchOptions& options);

// Answers searches over one index's documents; the backend is fixed when it is made. Searches
// on one searcher may come from several threads (they take turns where the backend must).
class Searcher {
 public:
  virtual ~Searcher() = default;
  // Each query's k nearest documents; with options.max_distance, only those within it (a row
  // then ends early: -1 past its last).
  // Both check the options first (check_k, check_options), once, for every backend. A
  // backend other than the CPU's leaves out options.skip by searching k + its size.
  SearchResults search(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                       SearchStats* stats = nullptr) const;
  // Every distance, streamed to sink batch by batch.
  void pairwise(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                SearchStats* stats = nullptr) const;
  virtual Backend backend() const = 0;
  // The index whose vocabulary the queries are written over (make_query_set against it).
  virtual const Index& index() const = 0;
  // The documents it searches (a row of pairwise, the indices of search's results).
  virtual std::size_t n_docs() const { return index().n_docs(); }

 protected:
  // The backend's top-k. It may prune with options.max_distance (and leave out documents
  // beyond it); search() keeps only those within.
  virtual SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                              SearchStats* stats) const = 0;
  // The backend's pairwise.
  virtual void all_distances(const QuerySet& queries, const SearchOptions& options,
                             const RowSink& sink, SearchStats* stats) const = 0;

 private:
  SearchResults top_k_without_skipped(const QuerySet& queries, std::size_t k,
                                      const SearchOptions& options, SearchStats* stats) const;
};

}  // namespace lcrwmd
