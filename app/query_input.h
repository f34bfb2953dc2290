#pragma once
// What the query-taking subcommands (search, pairwise, eval) share: their flags, loading the
// index and the queries, and progress notes on stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/cluster.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/segments.h"

namespace lcrwmd::app {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Progress and reports on stderr; under mpirun, rank 0's only.
inline void note(const char* fmt, auto... args) {
  if (!Cluster::speaks()) return;
  std::fprintf(stderr, fmt, args...);
  std::fputc('\n', stderr);
}

// What reading documents kept and dropped, and why.
void report_text(const TextReport& r, const char* what);

// --embeddings and --stopwords, worded alike for every command that reads queries.
void add_text_flags(CLI::App* c, std::string& embeddings, std::string& stopwords);

// A flag for each parameter of the methods `admits` (--act-steps for act_steps, ...), its help
// and default its description's; what is given lands in given[name] as typed.
void add_parameter_flags(CLI::App* c, std::map<std::string, std::string>& given,
                         bool (*admits)(const MethodInfo&));
// The parameters of `m` from such flags: each given one checked (an Error naming its flag),
// the rest at their defaults.
ParameterValues parameters_asked(Method m, const std::map<std::string, std::string>& given);

// --method (or another flag naming a method), its help listing the description of every
// method `admits`.
void add_method_flag(CLI::App* c, std::string& method, bool (*admits)(const MethodInfo&),
                     const char* flag = "--method", const char* what = "The distance");

struct QueryFlags {
  std::vector<std::string> indexes;  // one index, or a collection's shards in order
  std::string queries, embeddings, stopwords, prune = "bounds";
  std::string method;              // empty: the default of the queries' kind (query_kind)
  std::vector<std::string> typed;  // search --query: typed words, each a query
  std::string backend = "auto";
  std::string distribute = "docs";
  std::string precision = "auto";
  std::string direction, query_weights = "auto";  // direction: empty, the method's default
  std::vector<std::string> like;  // search --like: documents of the index as the queries
  bool one_sided = false, no_verify = false, tf32 = false;
  std::size_t batch = 0, memory_mib = 2048, device_memory_mib = 0, device_chunk = 0;
  // The methods' parameters given (--act-steps, --bm25-k1, ...), as typed, by name.
  std::map<std::string, std::string> parameters;
  float max_distance = std::numeric_limits<float>::infinity();
  int threads = 0, device = 0;

  // several: --index may be given several times (a collection of shards, lcrwmd/segments.h).
  void add(CLI::App* c, bool several = false);
  // --index, once or (several) repeated.
  void add_index(CLI::App* c, bool several);
  // The method's flags and the engine's: batch, --no-verify and add_backend's.
  void add_engine(CLI::App* c);
  // The backend's and its tuning (searcher_options): memory, threads, precision, backend,
  // devices, TF32.
  void add_backend(CLI::App* c);
  // --method (of the methods `admits`), a flag for each of their parameters (--act-steps, ...),
  // --direction (or --one-sided) and --query-weights.
  void add_method_flags(CLI::App* c, bool (*admits)(const MethodInfo&));
  // Top-k commands only: a full matrix needs every exact distance.
  void add_prune(CLI::App* c);
  // --max-distance: search's range.
  void add_max_distance(CLI::App* c);
  // Top-k commands only: how mpirun's ranks share the work (default_layout: "docs" or
  // "queries").
  void add_distribute(CLI::App* c, const char* default_layout);
  // What each search asks for.
  SearchOptions options() const;
  // Typed words (--query) or documents (--queries, --like: the commands' only kind but search's).
  QueryKind query_kind() const;
  // The method asked for (else the default of the queries' kind for the direction asked), and
  // its parameters (the flags given, checked; the rest at their defaults).
  Method method_asked() const;
  ParameterValues parameters_asked() const;
  // --direction, or --one-sided's, or the method's default.
  Direction direction_asked() const;
  // --direction or --one-sided's, where given.
  std::optional<Direction> direction_given() const;
  // How the queries are read: --query-weights for the direction asked.
  QueryOptions query_options() const;
  // The backend and its tuning: one searcher per command, made once.
  SearcherOptions searcher_options() const;
};

// "lc-rwmd symmetric", "lc-rwmd query-to-document", "wmd", ...
std::string describe(const SearchOptions& o);
// "cpu" or "cuda (NVIDIA H100 ...)": where a search ran, from its stats.
std::string describe_backend(const SearcherOptions& o, const SearchStats& st);
// How much work the bounds saved: D2 (symmetric LC-RWMD) or EMD solves (WMD) per pair; and
// phase 1's recomputed word distances.
void report_refinement(const SearchOptions& o, const SearchStats& st);

// Rank 0's query documents and --embeddings: --stopwords checked against the first index's own,
// and the embeddings holding the words of every index (the first's, and the other shards') with
// their vectors.
struct QueryText {
  std::vector<RawDocument> docs;
  std::unique_ptr<WordVectors> embeddings;  // null without --embeddings
};
QueryText read_query_text(const QueryFlags& f, const SegmentSet& indexes);

struct Loaded {
  // --index: the index files (in order) or the collection directory, as one collection.
  std::shared_ptr<const DocumentSnapshot> opened;
  QuerySet queries;                 // over the collection (SegmentSet::make_query_set)
  std::size_t excluded = 0;         // queries left with no known word
  std::vector<std::int64_t> liked;  // search --like: each query's document in the collection
  // The index files, or the collection's segments.
  const SegmentSet& documents() const { return opened->documents(); }
  // The index of a command that takes one (a collection: an Error unless it is one index).
  const Index& index() const;
};
// Every rank of the cluster maps the indexes; rank 0 reads the queries and sends them to all.
Loaded load_queries(const QueryFlags& f);

}  // namespace lcrwmd::app
