#include "app/query_input.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "app/commands.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/plural.h"
#include "lcrwmd/wire.h"

namespace lcrwmd::app {
namespace {

std::string list_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < 20; ++i) s += (i ? ", " : "") + ids[i];
  if (ids.size() > 20) s += ", ... (" + std::to_string(ids.size() - 20) + " more)";
  return s;
}

// A typed query as its id: its words on one line (a TSV field).
std::string one_line(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return text;
}

}  // namespace

void report_text(const TextReport& r, const char* what) {
  note(
      "%s: %zu read, %zu kept; %zu tokens: %zu stop words, %zu with no vector (%zu distinct) "
      "dropped",
      what, r.documents_read, r.documents_kept, r.tokens, r.stop_tokens, r.unknown_tokens,
      r.unknown_distinct);
  if (r.not_in_index_tokens > 0)
    note(
        "warning: %s: %zu tokens (%zu distinct words) not in the index dropped; give "
        "--embeddings (the file the index was built from) to look them up",
        what, r.not_in_index_tokens, r.not_in_index_distinct);
  if (!r.empty_documents.empty())
    note("%s: %zu left with no known word, excluded: %s", what, r.empty_documents.size(),
         list_ids(r.empty_documents).c_str());
}

void add_text_flags(CLI::App* c, std::string& embeddings, std::string& stopwords) {
  c->add_option("--embeddings", embeddings,
                "The word vectors the index was built from (an embeddings file or a fastText "
                "model .bin, which gives every word a vector), to look up query words it does not "
                "hold (else dropped)");
  c->add_option("--stopwords", stopwords,
                "Unneeded: the index applies the stop words it was built with (allowed only if "
                "the same)");
}

void add_method_flag(CLI::App* c, std::string& method, bool (*admits)(const MethodInfo&),
                     const char* flag, const char* what) {
  std::string help = std::string(what) + ", one of:";
  std::vector<std::string> names;
  for (const Method m : methods()) {
    if (!admits(m.info())) continue;
    help += std::string("\n  ") + m.name() + ": " + m->summary;
    names.emplace_back(m.name());
  }
  auto* o = c->add_option(flag, method, help)->check(CLI::IsMember(names));
  if (!method.empty())
    o->capture_default_str();
  else  // the queries' kind chooses
    o->description(help + "\nDefault: " + default_method(QueryKind::document).name() +
                   " for documents as queries; " + default_method(QueryKind::text).name() +
                   " for typed words (search --query)");
}

void add_parameter_flags(CLI::App* c, std::map<std::string, std::string>& given,
                         bool (*admits)(const MethodInfo&)) {
  for (const Parameter* p : all_parameters()) {
    if (method_names([&](const MethodInfo& m) {
          return admits(m) && m.parameter(p->name);
        }).empty())
      continue;
    c->add_option(flag(*p), given[p->name], methods_with(p->name) + ": " + p->help)
        ->type_name(p->kind == Parameter::Kind::integer ? "INT" : "FLOAT")
        ->default_str(format_value(*p, p->default_value));
  }
}

void QueryFlags::add_method_flags(CLI::App* c, bool (*admits)(const MethodInfo&)) {
  add_method_flag(c, method, admits);
  add_parameter_flags(c, parameters, admits);
  c->add_option("--direction", direction,
                "symmetric: max(D1, D2), how alike two documents are; query-to-document: D2 = "
                "R(query -> document), each query word to its nearest document word (for short "
                "queries: a search box's); document-to-query: D1 = R(document -> query). "
                "One-sided forms: " +
                    method_names([](const MethodInfo& m) { return m.query_to_document; }) +
                    ". Default: symmetric where the method has it (bm25: query-to-document)")
      ->check(CLI::IsMember({"symmetric", "document-to-query", "query-to-document"}));
  c->add_flag("--one-sided", one_sided, "The same as --direction document-to-query");
  c->add_option("--query-weights", query_weights,
                "How query words weigh against each other: index (as the index weighs its "
                "documents), idf (TF-IDF by the index's document frequencies), auto (idf for "
                "query-to-document, else index)")
      ->check(CLI::IsMember({"auto", "index", "idf"}))
      ->capture_default_str();
}

std::optional<Direction> QueryFlags::direction_given() const {
  const std::optional<Direction> asked =
      direction.empty() ? std::nullopt : std::optional(parse_direction(direction));
  if (one_sided && asked && *asked != Direction::document_to_query)
    throw Error("--one-sided is --direction document-to-query: give one of them");
  return one_sided ? Direction::document_to_query : asked;
}

Direction QueryFlags::direction_asked() const {
  return resolve_direction(method_asked().info(), direction_given(), one_sided);
}

QueryKind QueryFlags::query_kind() const {
  return typed.empty() ? QueryKind::document : QueryKind::text;
}

Method QueryFlags::method_asked() const {
  return method.empty() ? default_method(query_kind(), direction_given()) : Method(method);
}

ParameterValues QueryFlags::parameters_asked() const {
  return app::parameters_asked(method_asked(), parameters);
}

ParameterValues parameters_asked(Method m, const std::map<std::string, std::string>& given) {
  ParameterValues values;
  try {
    for (const auto& [name, text] : given)
      if (!text.empty()) values.set(name, parse_value(*find_parameter(name), text));
    return method_parameters(m, values);
  } catch (const OptionError& e) {
    std::string f = "--" + e.option();
    std::replace(f.begin(), f.end(), '_', '-');
    throw Error(f + ": " + e.what());
  }
}

QueryOptions QueryFlags::query_options() const {
  QueryOptions o;
  o.weights = parse_query_weights(query_weights, direction_asked());
  o.keep_term_only = !method_asked()->vectors;
  return o;
}

void QueryFlags::add_index(CLI::App* c, bool several) {
  auto* o = c->add_option("--index", indexes,
                          several ? "Index file from 'lcrwmd build' or 'lcrwmd synth', or a "
                                    "collection directory ('lcrwmd build --collection'); files "
                                    "given several times: shards searched as one collection of "
                                    "their documents in order ('lcrwmd build --shards N' writes "
                                    "them)"
                                  : "Index file from 'lcrwmd build' or 'lcrwmd synth', or a "
                                    "collection directory of one segment")
                ->required();
  if (!several) o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

void QueryFlags::add(CLI::App* c, bool several) {
  add_index(c, several);
  c->add_option("--queries", queries, "Query documents: TSV id<TAB>label<TAB>text (.gz ok)")
      ->required();
  add_text_flags(c, embeddings, stopwords);
  add_engine(c);
}

void QueryFlags::add_engine(CLI::App* c) {
  add_method_flags(c, [](const MethodInfo&) { return true; });
  c->add_option("--batch", batch,
                "Queries that share one phase-1 pass, at most (default: as many as --memory "
                "holds; lc-rwmd stops at 65,536 query words, its pruned top-k at 32,768)")
      ->check(at_least_one());
  c->add_flag("--no-verify", no_verify, "Skip the index checksum on load");
  add_backend(c);
}

void QueryFlags::add_backend(CLI::App* c) {
  c->add_option("--memory", memory_mib, "Working-memory budget in MiB beyond the index")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--threads", threads, "Threads (default: all cores)");
  c->add_option("--precision", precision,
                "Phase-1 GEMM: auto (the fastest this CPU or GPU has) | f32 | bf16 | int8 (CPU "
                "only); every precision gives the same results")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "int8"}))
      ->capture_default_str();
  c->add_option("--backend", backend,
                "cpu | cuda | auto (the GPU where one is present and the method runs there)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  c->add_option("--device", device, "CUDA device number")->capture_default_str();
  c->add_option("--device-memory", device_memory_mib,
                "CUDA: working-memory budget in MiB beyond the resident set (default: most of "
                "what is free)");
  c->add_option("--device-chunk", device_chunk,
                "CUDA: documents per resident chunk (default: as many as fit)");
  c->add_flag("--tf32", tf32,
              "CUDA: phase-1 GEMM on TF32 tensor cores (faster; ~1e-3 relative error)");
}

void QueryFlags::add_prune(CLI::App* c) {
  c->add_option("--prune", prune,
                "Top-k of " + method_names([](const MethodInfo& m) { return m.bounded; }) +
                    " (symmetric): 'bounds' computes exact distances only where the lower "
                    "bounds leave a document a chance; 'none' for every document (same "
                    "results, slower)")
      ->check(CLI::IsMember({"bounds", "none"}))
      ->capture_default_str();
}

void QueryFlags::add_distribute(CLI::App* c, const char* default_layout) {
  distribute = default_layout;
  c->add_option("--distribute", distribute,
                "Under mpirun with one --index: 'docs' gives each rank a contiguous part of the "
                "documents (the resident set spread), 'queries' a part of the queries (each rank "
                "maps the whole index). With --index once per rank, or a collection that is not "
                "one index (each rank a run of its segments), each rank searches its own part")
      ->check(CLI::IsMember({"docs", "queries"}))
      ->capture_default_str();
}

void QueryFlags::add_max_distance(CLI::App* c) {
  c->add_option("--max-distance", max_distance,
                "Only neighbours at most this far (a range search; --k still caps each query's "
                "list); a bounded method computes exact distances only where its bound is "
                "within it");
}

SearchOptions QueryFlags::options() const {
  SearchOptions o;
  o.method = method_asked();
  o.direction = direction_asked();
  o.max_distance = max_distance;
  o.parameters = parameters_asked();
  try {
    check_options(o);
  } catch (const OptionError& e) {
    std::string flag = e.option() == "direction" && one_sided ? "one-sided" : e.option();
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw Error("--" + flag + ": " + e.what());
  }
  o.prune = prune == "bounds";
  o.batch = batch;
  o.progress = [t = Clock::now()](std::size_t done, std::size_t total) {
    note("  %zu/%zu queries (%.2f s)", done, total, since(t));
  };
  return o;
}

SearcherOptions QueryFlags::searcher_options() const {
  SearcherOptions o;
  o.backend = parse_backend(backend);
  try {  // --backend cuda --method wmd: an error before any work
    resolve_backend(o.backend, options());
  } catch (const OptionError& e) {
    throw Error("--backend " + backend + ": " + e.what());
  }
  o.cpu.memory_budget = memory_mib << 20;
  o.cpu.precision = parse_precision(precision);
  o.gpu.device = device;
  o.gpu.memory_budget = device_memory_mib << 20;
  o.gpu.chunk_docs = device_chunk;
  o.gpu.allow_tf32 = tf32;
  return o;
}

std::string describe(const SearchOptions& o) {
  const MethodInfo& m = o.method.info();
  std::string s = m.name;
  // Its counts (act's k) belong to its name: act-2.
  for (const Parameter& p : m.parameters)
    if (p.kind == Parameter::Kind::integer)
      s += "-" + format_value(p, parameter_value(o.method, o.parameters, p.name));
  if (m.document_to_query || m.query_to_document) s += std::string(" ") + to_string(o.direction);
  return s;
}

std::string describe_backend(const SearcherOptions& o, const SearchStats& st) {
  if (st.backend != Backend::cuda)
    return st.precision == Precision::automatic
               ? "cpu"
               : "cpu, phase 1 in " + describe_precision(st.precision);
  std::string s = "cuda (" + gpu_device(o.gpu.device).name + ")";
  if (st.device_chunks > 1) s += ", " + std::to_string(st.device_chunks) + " resident chunks";
  if (st.precision != Precision::automatic)
    s += std::string(", phase 1 in ") + (o.gpu.allow_tf32 ? "tf32" : to_string(st.precision));
  return s;
}

// How much work the bounds saved: D2 (LC-RWMD) or EMD solves (WMD) per pair.
void report_refinement(const SearchOptions& o, const SearchStats& st) {
  const double pairs = static_cast<double>(std::max<std::size_t>(st.distances, 1));
  if (o.method->costly_exact)
    note("  EMD solves: %zu of %zu pairs (%.2f%% avoided); tighter bounds: %zu", st.refined,
         st.distances, 100.0 * (1.0 - static_cast<double>(st.refined) / pairs), st.tightened);
  else if (o.direction != Direction::document_to_query && o.method->bounded)
    note(
        "  D2 computed for %zu of %zu pairs; tighter bounds of D2 (neighbourhoods, kept word "
        "distances): %zu",
        st.refined, st.distances, st.tightened);
  if (st.walked)
    note("  %zu of the queries walked their words' postings (the rest: every document)", st.walked);
  if (st.word_pairs)
    note("  phase 1: %.3f word distances recomputed per (vocabulary word, query) (%zu of %zu)",
         static_cast<double>(st.recomputed) / static_cast<double>(st.word_pairs), st.recomputed,
         st.word_pairs);
}

QueryText read_query_text(const QueryFlags& f, const SegmentSet& indexes) {
  const Index& index = indexes.segment(0);
  if (!f.stopwords.empty())
    check_stopwords(index, StopWords::load(f.stopwords, index.tokenizer_version()),
                    "--stopwords " + f.stopwords);
  QueryText text;
  if (f.typed.empty())
    text.docs = read_tsv(f.queries);
  else  // each query's id its words, as typed
    for (std::size_t q = 0; q < f.typed.size(); ++q)
      text.docs.push_back({.id = one_line(f.typed[q]), .label = "", .text = f.typed[q]});
  if (f.embeddings.empty()) return text;
  // The queries' words and every index's: each index's words must be there, unchanged.
  WordSet words = distinct_tokens(text.docs, index.tokenizer_version());
  for (std::size_t s = 1; s < indexes.size(); ++s)
    for (std::size_t u = 0; u < indexes.segment(s).vocab_size(); ++u)
      words.emplace(indexes.segment(s).word(u));
  text.embeddings = load_query_embeddings(index, f.embeddings, &words);
  for (std::size_t s = 1; s < indexes.size(); ++s)
    check_embeddings(indexes.segment(s), *text.embeddings);
  return text;
}

const Index& Loaded::index() const {
  const Collection* c = opened->collection();
  if (c != nullptr && !c->is_one_index())
    throw Error(not_one_index(c->path(), c->n_segments(), c->n_deleted()));
  return documents().segment(0);
}

Loaded load_queries(const QueryFlags& f) {
  set_threads(f.threads);
  Cluster& cluster = Cluster::current();
  if (f.indexes.size() > 1 && cluster.size() > 1)
    throw Error("--index given " + std::to_string(f.indexes.size()) +
                " times under mpirun: only search takes a shard per rank; give one index (each "
                "rank takes a part of it)");
  Loaded l;
  cluster.step([&] {
    const auto t = Clock::now();
    l.opened = DocumentSnapshot::open(f.indexes, !f.no_verify);
    const SegmentSet& all = l.documents();
    if (const Collection* c = l.opened->collection()) {
      note("collection %s: %s in %s (%zu deleted), %zu distinct words (%.2f s)", c->path().c_str(),
           plural(all.n_docs(), "document").c_str(), plural(c->n_segments(), "segment").c_str(),
           c->n_deleted(), all.vocab_size(), since(t));
    } else {
      for (std::size_t i = 0; i < f.indexes.size(); ++i) {
        const Index& ix = l.documents().segment(i);
        note("index %s: %zu documents, %zu words, dim %zu (%.2f s)", f.indexes[i].c_str(),
             ix.n_docs(), ix.vocab_size(), ix.dim(), since(t));
      }
      if (f.indexes.size() > 1)
        note("collection: %zu documents in %zu shards, %zu distinct words", all.n_docs(),
             f.indexes.size(), all.vocab_size());
    }
    if (!cluster.root()) return;
    if (!f.like.empty()) {  // documents of the collection, by id, as the queries
      std::vector<std::size_t> docs;
      for (const std::string& id : f.like) {
        const auto doc = l.documents().find_doc(id);
        if (!doc) throw Error("--like: no document with id '" + id + "'");
        docs.push_back(*doc);
        l.liked.push_back(static_cast<std::int64_t>(*doc));
      }
      l.queries = l.documents().documents_as_queries(docs, f.method_asked()->reads_terms());
      return;
    }
    const QueryText text = read_query_text(f, l.documents());
    QueryOptions qo = f.query_options();
    qo.embeddings = text.embeddings.get();
    TextReport report;
    l.queries = l.documents().make_query_set(text.docs, qo, &report);
    report_text(report, "queries");
    if (!l.queries.extra_words.empty() && text.embeddings)
      note("queries: %zu words not in the %s taken from %s", l.queries.extra_words.size(),
           l.documents().size() > 1 ? "first shard" : "index", f.embeddings.c_str());
    l.excluded = report.empty_documents.size();
  });
  if (cluster.size() > 1) {
    std::string bytes = cluster.root() ? std::to_string(l.excluded) + '\n' + pack(l.queries) : "";
    cluster.broadcast(bytes);
    const std::size_t eol = bytes.find('\n');
    l.excluded = std::stoul(bytes.substr(0, eol));
    l.queries = unpack_queries(bytes.substr(eol + 1));
    note("mpirun: %d ranks", cluster.size());
  }
  return l;
}

}  // namespace lcrwmd::app
