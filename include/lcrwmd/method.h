#pragma once
// What each method is, said once: its name, what it computes, which directions and options it
// has, where it runs and what phase 1 keeps for it. The planners, the option checks, the CLI's
// --help, serve's page, the Python module and docs/methods.md (`lcrwmd methods`) all read these
// descriptions, and each entry points at what the library runs for the method (its MethodImpl,
// defined in the method's own file), so a new method is its own files, an enumerator and one
// entry in methods().
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lcrwmd {

enum class Method {
  wcd,      // Word Centroid Distance
  rwmd,     // quadratic RWMD: per pair cost matrix, row and column minima (the reference)
  lc_rwmd,  // linear-complexity RWMD (Atasu et al. 2017)
  wmd,      // exact Word Mover's Distance (an EMD per pair; top-k pruned by the RWMD bounds)
  act,      // ACT-k (Atasu & Mittelholzer 2019): RWMD <= ACT-k <= WMD, linear complexity
  ict,      // ICT, every capped step ACT can take: ACT-k <= ICT <= WMD
  bm25,     // Okapi BM25 over the documents' terms (no vectors): lexical search's baseline
  hybrid,   // BM25 and query-to-document LC-RWMD, each standardised over the documents, summed
};

// Which way a distance between a query and a document is measured. The relaxations (RWMD,
// ACT-k, ICT) move one side's mass onto the other's words, so each has two one-sided forms;
// WMD and WCD are symmetric by definition; BM25 scores a document for a query, one way only.
enum class Direction {
  symmetric,          // max(D1, D2): how alike two documents are ("more like this")
  document_to_query,  // D1 = R(document -> query): every document word to the query's words
  query_to_document,  // D2 = R(query -> document): every query word to the document's words;
                      // what a search box wants (a short query is not charged for the words
                      // of the document it never mentions)
};
const char* to_string(Direction d);
// "symmetric" | "document-to-query" | "query-to-document"; anything else: an Error naming them.
Direction parse_direction(std::string_view s);
inline constexpr Direction kDirections[] = {Direction::symmetric, Direction::document_to_query,
                                            Direction::query_to_document};

// What phase 1 (every vocabulary word against a batch's distinct query words) keeps for each
// (vocabulary word, query).
enum class WordPass {
  none,     // no phase 1: the method works per pair or on centroids
  nearest,  // the distance to the query's nearest word (LC-RWMD's Z)
  capped,   // the query's k + 1 nearest words with their costs and weights (ACT's slots; ICT: all)
};

struct MethodImpl;  // what the library runs for it (its own, src/methods/method_impl.h)

struct MethodInfo {
  Method method;
  const char* name;     // as every front end spells it
  const char* summary;  // one line: what it computes
  bool symmetric;       // it has a symmetric form (its default direction then)
  // Its one-sided forms: D1 = R(document -> query) (--direction document-to-query, or
  // --one-sided) and D2 = R(query -> document). A direction a method lacks is refused rather
  // than silently made symmetric.
  bool document_to_query;
  bool query_to_document;
  // A symmetric top-k computes exact distances only where cheaper lower bounds leave a
  // document a chance (--prune); the results are the same either way.
  bool bounded;
  WordPass word_pass;
  // The symmetric form keeps phase 1's word distances (vocabulary x the batch's query words)
  // for the other direction and the bounds: 4 bytes per vocabulary word per query word.
  bool caches_word_distances;
  bool reads_act_steps;  // act_steps (k) is one of its options
  bool runs_on_gpu;      // the CUDA backend has it
  bool explains;         // explain shows the words that carry its distance
  // CPU: the most queries one batch shares (0: as many as the memory budget holds).
  std::size_t max_cpu_batch;
  // An exact distance costs far more than its bound (an EMD solve): shards on several ranks
  // first share an estimate of each query's k-th best, so that none solves pairs the others'
  // documents have already beaten.
  bool costly_exact;
  // Its distance is minus a score, and only the documents that share a term with the query are
  // found (bm25).
  bool lexical;
  // It ranks by a score, higher is better, and its distance is minus that score (bm25, hybrid):
  // what front ends show is the score, named so.
  bool ranks_by_score;
  // It reads the queries' terms (bm25, hybrid): queries read from text (make_query_set), over
  // an index that keeps its terms.
  bool reads_terms;
  // Its distances depend on every document searched (hybrid standardises over them): a
  // collection's segments answer together (ShardedSearcher); the ranks of a distributed one
  // refuse it rather than rank by each rank's own.
  bool whole_index;
  const MethodImpl* impl;
};

// Its yes-or-no properties a user reads, by the names every front end gives them (JSON, Python):
// document_to_query, query_to_document, bounded, reads_act_steps, runs_on_gpu, explains.
std::vector<std::pair<const char*, bool>> method_properties(const MethodInfo& m);

// Every method, in the order front ends list them.
std::span<const MethodInfo> methods();
const MethodInfo& describe(Method m);
// Whether method `m` is defined in direction `d`.
bool has_direction(const MethodInfo& m, Direction d);
// The direction a search runs in where none is asked: symmetric where `m` has it, else its one
// direction (bm25: query-to-document).
Direction default_direction(const MethodInfo& m);
// The direction asked for (none: the method's default), or the older one_sided flag
// (document-to-query). Both at once, disagreeing: an Error.
Direction resolve_direction(const MethodInfo& m, std::optional<Direction> asked, bool one_sided);
// The names of the directions of `m`, in kDirections' order (JSON and Python list them), and as
// prose: "symmetric, document-to-query or query-to-document".
std::vector<const char*> directions(const MethodInfo& m);
std::string direction_names(const MethodInfo& m);
const char* to_string(Method m);
// "wcd" | "rwmd" | "lc-rwmd" | "wmd" | "act" | "ict" | "bm25" | "hybrid"; anything else: an
// Error naming them.
Method parse_method(std::string_view s);
// Names as prose: "a, b or c".
std::string prose_list(const std::vector<const char*>& names);
// The names of the methods with `pred`, as prose: "wcd, rwmd or wmd".
template <typename Pred>
std::string method_names(Pred pred) {
  std::vector<const char*> names;
  for (const MethodInfo& m : methods())
    if (pred(m)) names.push_back(m.name);
  return prose_list(names);
}
inline std::string method_names() {
  return method_names([](const MethodInfo&) { return true; });
}

}  // namespace lcrwmd
