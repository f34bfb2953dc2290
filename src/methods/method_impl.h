#pragma once
// What the library runs for a method, beside its description (lcrwmd/method.h): its CPU batch
// computation with what the planner must know of it, the GPU pipeline it runs there (or none),
// and the flows explain shows. Each method's folder defines its MethodImpl next to its
// MethodInfo; the searchers, the planners and explain ask here instead of testing the method.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "lcrwmd/explain.h"
#include "lcrwmd/method.h"
#include "lcrwmd/segments.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

// What a batch's computation is made from.
struct MethodContext {
  const Index& index;
  QueryRange queries;
  const SearchOptions& options;
  const Phase1* phase1;      // null for a method without a phase 1 (WordPass::none)
  std::size_t cache_budget;  // bytes it may keep for D2's word distances
  Rows rows;                 // distances, or bounds a top-k refines
};

// What phase 1 (every vocabulary word against a batch's distinct query words) keeps for each
// (vocabulary word, query).
enum class WordPass {
  none,     // no phase 1: the method works per pair, on centroids or on terms
  nearest,  // the distance to the query's nearest word (LC-RWMD's Z)
  capped,   // the query's k + 1 nearest words with their costs and weights (ACT's slots; ICT: all)
};

// The CPU's distances (or bounds) of a batch of queries to every document, and what planning
// that batch's memory must know of them.
struct CpuBatch {
  std::unique_ptr<BatchDistance> (*make)(const MethodContext& context) = nullptr;
  WordPass word_pass = WordPass::none;
  // The symmetric and query-to-document forms keep phase 1's word distances (vocabulary x the
  // batch's query words) for D2 and its bounds: 4 bytes per vocabulary word per query word.
  bool caches_word_distances = false;
  // A pruned top-k asks phase 1 for bounds (Rows::bounds) and refines the few documents that
  // need it (LC-RWMD's D1); otherwise the method computes its distances or its own bounds.
  bool bounds_rows = false;
  // The most queries one batch shares (0: as many as the memory budget holds).
  std::size_t max_batch = 0;
  // A top-k of its own over one index, in place of its batches' rows (bm25's walk over its
  // postings, which skips what cannot enter); null: the rows'.
  SearchResults (*top_k)(const Index& index, const QuerySet& queries, std::size_t k,
                         const SearchOptions& options, SearchStats* stats) = nullptr;
};

// The pipeline the CUDA backend runs for a method (src/cuda/gpu_index.cpp), or none.
enum class GpuPass {
  none,       // the CPU's only
  centroids,  // WCD's kernel over the documents' centroids
  quadratic,  // each pair's word costs, the documents' own words as phase 1's rows
  nearest,    // phase 1 against the vocabulary keeping each word's nearest query word (LC-RWMD)
  capped,     // phase 1 keeping ACT's capped slots (act_steps_of: k, or every step)
};

// Rows (queries x the collection's live documents) of a search each segment's searcher answers,
// written into `rows` in the collection's order: what a method reading whole rows builds on.
using SegmentRows = std::function<void(const SearchOptions& search, float* rows)>;

// A batch of queries whose top-k walks (BatchDistance::walks), its phase 1 done, with what it
// was computed from: what a method walking a collection's segments together reads of each.
struct WalkingBatch {
  std::unique_ptr<const Phase1> phase1;  // what the batch reads (null: none); kept as long
  std::unique_ptr<BatchDistance> distance;
};
// Segment s's walking batch of queries [begin, end) of `queries` (written over its vocabulary:
// SegmentSet::for_segment, kept by the caller while the batch lives), made by its searcher as
// its own top-k would make it; null where that one would not walk (another backend's searcher,
// or no room for the word distances).
using SegmentWalks = std::function<std::unique_ptr<WalkingBatch>(
    std::size_t s, const QuerySet& queries, std::size_t begin, std::size_t end,
    const SearchOptions& options)>;

// Needs::whole_rows: a method's evidence of a block of queries over some segments' live
// documents, query-major (a row per query, the documents in the collection's order), a distance
// and a score each: what it needs of every document before it answers (the hybrid standardises
// both over all of them). The segments' own (CollectionSearcher), or every rank's side by side
// (RankShards).
struct Evidence {
  std::vector<float> distances;
  std::vector<double> scores;
};

// How a method answers a collection's segments together (CollectionSearcher, and mpirun's ranks
// over theirs) where its way is not the default one: each segment's searcher in turn, the k-th
// best so far the next segment's ceiling, the lists merged (methods needing nothing of the
// collection: their distance is the document's own).
struct SegmentsWay {
  // Its top-k over every segment at once; null: the default.
  SearchResults (*top_k)(const SegmentSet& segments, const QuerySet& queries, std::size_t k,
                         const SearchOptions& options, SearchStats* stats) = nullptr;
  // Needs::whole_rows: a pruned top-k that walks each segment's batches (walks_of) instead of
  // reading every document's rows; nullopt where a segment's batch would not walk (then the
  // rows' way, evidence and answer below).
  std::optional<SearchResults> (*walk)(const SegmentSet& segments, const QuerySet& queries,
                                       std::size_t k, const SearchOptions& options,
                                       const SegmentWalks& walks_of, SearchStats* stats) = nullptr;
  // Needs::whole_rows: the evidence of `part` over the segments' live documents, from rows of
  // other searches (rows_of) and the segments...
  Evidence (*evidence)(const SegmentSet& segments, const SegmentRows& rows_of, const QuerySet& part,
                       const SearchOptions& options) = nullptr;
  // ...and, once every live document's is there (n_docs a row), its distances in place of the
  // evidence's (a top-k selects from them).
  void (*answer)(Evidence& whole, std::size_t n_docs, const SearchOptions& options) = nullptr;
};

// What the library runs for a method. A method sets what it has; the rest keeps these defaults.
struct MethodImpl {
  CpuBatch cpu;
  GpuPass gpu = GpuPass::none;
  SegmentsWay segments = {};
  // explain's flows for query q and document doc (Explanation's fields), in the arithmetic of
  // the method's reference; null where a distance moves no word.
  void (*explain)(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                  const SearchOptions& options, Explanation& out) = nullptr;
};

inline const MethodImpl& implementation(Method m) { return *m->impl; }

// The library's methods, each described in its folder: the registry lists them, and a method
// built on another names it (the hybrid's distance is lc-rwmd's).
extern constinit const MethodInfo kBm25Method, kHybridMethod, kWcdMethod, kRwmdMethod,
    kLcRwmdMethod, kWmdMethod, kActMethod, kIctMethod;

// explain's flows of the families of methods (explain.cpp), as MethodImpl::explain: both
// directions of RWMD from each word's nearest counterpart; ACT-k's capped transfers (ICT's
// with every step); WMD's optimal flow.
void explain_rwmd(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                  const SearchOptions& options, Explanation& e);
void explain_act(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                 const SearchOptions& options, Explanation& e);
void explain_wmd(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                 const SearchOptions& options, Explanation& e);

}  // namespace lcrwmd
