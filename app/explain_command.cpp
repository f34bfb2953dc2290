// lcrwmd explain: which words carried a query's distance to one document (lcrwmd/explain.h),
// as a table (largest contributions first) or as JSON, one object per query.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/commands.h"
#include "app/json_out.h"
#include "app/query_input.h"
#include "lcrwmd/error.h"
#include "lcrwmd/explain.h"

namespace lcrwmd::app {
namespace {

void print_flows(const std::string& title, const std::vector<WordFlow>& flows, double distance,
                 std::size_t top) {
  std::printf("  %s\n  %-20s %-20s %9s %9s %9s %6s\n", title.c_str(), "query word", "document word",
              "mass", "cost", "mass*cost", "share");
  for (std::size_t i = 0; i < flows.size() && (top == 0 || i < top); ++i) {
    const WordFlow& f = flows[i];
    const double part = f.mass * f.cost;
    std::printf("  %-20s %-20s %9.5f %9.5f %9.5f %5.1f%%\n", f.query_word.c_str(),
                f.doc_word.c_str(), f.mass, f.cost, part, distance > 0 ? 100 * part / distance : 0);
  }
  if (top != 0 && flows.size() > top) std::printf("  ... %zu more\n", flows.size() - top);
}

// One direction: `from` words each to their nearest `to` word (RWMD), or in capped steps to
// their nearest `to` words (ACT, ICT).
void print_direction(const char* from, const char* to, bool capped,
                     const std::vector<WordFlow>& flows, double distance, bool sets_distance,
                     std::size_t top) {
  char title[200];
  std::snprintf(title, sizeof title, "%s -> %s: each %s word %s, %.9g%s", from, to, from,
                capped ? "in capped steps to its nearest words" : "to its nearest word", distance,
                sets_distance ? " (sets the distance)" : "");
  print_flows(title, flows, distance, top);
}

void print_table(const Explanation& e, std::size_t top) {
  std::printf("query %s -> document %s: %s %.9g\n", e.query.c_str(), e.doc.c_str(),
              to_string(e.method), e.distance);
  if (!e.sides) {
    print_flows("optimal flow (query word -> document word)", e.flows, e.distance, top);
    return;
  }
  const bool capped = e.capped;
  if (e.direction != Direction::query_to_document)
    print_direction("document", "query", capped, e.doc_to_query, e.doc_to_query_distance,
                    e.doc_to_query_set_distance, top);
  if (e.direction != Direction::document_to_query)
    print_direction("query", "document", capped, e.query_to_doc, e.query_to_doc_distance,
                    !e.doc_to_query_set_distance, top);
}

}  // namespace

void add_explain(CLI::App& app) {
  auto* c =
      app.add_subcommand("explain", "Which words carried the distance of queries to a document");
  struct Flags {
    QueryFlags q;
    std::string doc;
    bool json = false;
    std::optional<std::size_t> top;  // default: 10 in the table, all in JSON
  };
  auto f = std::make_shared<Flags>();
  f->q.method = "wmd";
  f->q.add_index(c, false);
  c->add_option("--queries", f->q.queries, "TSV: id<TAB>label<TAB>text")->required();
  c->add_option("--doc", f->doc, "Document id in the index")->required();
  f->q.add_method_flags(c, [](const MethodInfo& m) { return m.explains(); });
  add_text_flags(c, f->q.embeddings, f->q.stopwords);
  c->add_flag("--json", f->json, "One JSON object per query (a line each)");
  c->add_option("--top", f->top,
                "Flows shown per direction (0: all; default: 10 in the table, all in JSON, "
                "which says how many it left out)");
  c->add_option("--precision", f->q.precision,
                "As for search (explain recomputes each pair's word distances from the vectors, "
                "so every precision gives the same flows)")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "int8"}))
      ->capture_default_str();
  c->callback([f] {
    const Method method = f->q.method_asked();
    const ParameterValues parameters = f->q.parameters_asked();
    resolve_precision(parse_precision(f->q.precision));  // a precision this CPU lacks: an error
    Loaded l = load_queries(f->q);
    const auto doc = l.index().find_doc(f->doc);
    if (!doc)
      throw Error("--doc " + f->doc + ": no document with this id in " + f->q.indexes.front());
    if (l.queries.size() == 0) throw Error(f->q.queries + ": no query with a known word");
    for (std::size_t q = 0; q < l.queries.size(); ++q) {
      const Explanation e =
          explain(l.index(), l.queries, q, *doc, method, f->q.direction_asked(), parameters);
      if (f->json)
        std::printf("%s\n", to_bytes(explanation_json(e, f->top.value_or(0))).c_str());
      else
        print_table(e, f->top.value_or(10));
    }
    if (std::fflush(stdout) != 0) throw Error("cannot write to stdout");
  });
}

}  // namespace lcrwmd::app
