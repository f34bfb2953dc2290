#pragma once
// What a method is, said once in the method's own folder (src/methods/<name>/): its name, what
// it computes, its directions, what it needs from the collection, its parameters and what the
// library runs for it (hnswlib's SpaceInterface: the searchers ask it, never test its name).
// The planners, the option checks, the CLI's flags and --help, the service's JSON fields, the
// Python keyword arguments, serve's page and docs/methods.md (`lcrwmd methods`) all read these
// descriptions, so a new method is its own folder and one line of the registry
// (src/methods/registry.cpp), or a register_method() call for one defined outside the library.
//
//   SearchOptions o;
//   o.method = Method("act");
//   o.parameters.set("act_steps", 3);   // each parameter named as its description names it
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lcrwmd/error.h"

namespace lcrwmd {

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

// A search that cannot run as asked, and the option at fault as SearchOptions (or search's k, or
// a method's parameter) spells it: "k", "direction", "act_steps", ... Front ends point at their
// own spelling of it (--act-steps, a JSON field, a keyword argument); the rule and its message
// are the library's.
class OptionError : public Error {
 public:
  OptionError(std::string option, const std::string& message)
      : Error(message), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

// One parameter of a method, described once: its name is the service's JSON field and Python's
// keyword argument, and with hyphens the command line's flag (flag()); its default, the values it
// takes and its help are every front end's.
struct Parameter {
  enum class Kind { integer, number };
  const char* name;
  Kind kind;
  double default_value;
  // The values allowed, inclusive; every value is finite (max may be infinite: no bound above).
  double min, max;
  const char* help;
  // What a refusal adds after the range ("use method ict for every step"); may be empty.
  const char* hint = "";
};
// "--act-steps" for act_steps.
std::string flag(const Parameter& p);
// A value as the parameter's kind writes it: "3", "0.75".
std::string format_value(const Parameter& p, double value);
// An OptionError naming p where it does not take `value` (out of its range, not finite, or not
// an integer where it counts).
void check_value(const Parameter& p, double value);
// `text` (a command line's) as p's value, checked: an OptionError naming p where it is not one.
double parse_value(const Parameter& p, std::string_view text);

// Values of parameters, by name. A parameter a search does not set takes its default.
class ParameterValues {
 public:
  ParameterValues() = default;
  ParameterValues(std::initializer_list<std::pair<std::string_view, double>> values);
  void set(std::string_view name, double value);
  std::optional<double> find(std::string_view name) const;
  bool empty() const { return values_.empty(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  bool operator==(const ParameterValues&) const = default;

 private:
  std::vector<std::pair<std::string, double>> values_;  // ascending by name
};

// What a document's distance depends on beyond the query and the document itself.
enum class Needs {
  nothing,          // the two alone (the embedding methods)
  term_statistics,  // the collection's term statistics: its documents, each term's document
                    // frequency, their total length (bm25's IDF and length normalisation)
  whole_rows,       // every document's distance and the term statistics (the hybrid
                    // standardises its two scores over all of them)
};

// What a method answers: a distance (smaller is nearer), or a score (larger is better) whose
// negation is its distance; front ends show the score, named so.
enum class Answer { distance, score };

// What a query is, for the method a search takes where none is named.
enum class QueryKind {
  text,      // what people type: a search box's words
  document,  // a document as the query: "more like this", classification, pairs
};

struct MethodImpl;  // what the library runs for it (src/methods/method_impl.h)

// A method's description. A method lists what sets it apart; the rest keeps these defaults.
struct MethodInfo {
  const char* name;     // as every front end spells it
  const char* summary;  // one line: what it computes
  // Its directions: the symmetric form (its default direction where it has one), D1 =
  // R(document -> query) (--direction document-to-query, or --one-sided) and D2 = R(query ->
  // document). A direction a method lacks is refused rather than silently made symmetric.
  bool symmetric = true, document_to_query = false, query_to_document = false;
  // It measures word vectors; without (bm25), only documents sharing a term are found, and a
  // query none of whose words has a vector is searched by its terms.
  bool vectors = true;
  Needs needs = Needs::nothing;
  Answer answer = Answer::distance;
  // A top-k computes exact distances only where cheaper lower bounds leave a document a chance
  // (--prune); the results are the same either way.
  bool bounded = false;
  // An exact distance costs far more than its bound (an EMD solve): shards on several ranks
  // first share an estimate of each query's k-th best, so that none solves pairs the others'
  // documents have already beaten.
  bool costly_exact = false;
  std::span<const Parameter> parameters = {};
  std::optional<QueryKind> default_for = std::nullopt;  // the kind of search it is the default of
  const MethodImpl* impl = nullptr;

  bool has(Direction d) const;
  // Where a search names none: symmetric where it has it, else its one direction.
  Direction default_direction() const;
  bool reads_terms() const { return needs != Needs::nothing; }
  bool runs_on_gpu() const;  // the CUDA backend has it
  bool explains() const;     // explain shows the words that carry its distance
  const Parameter* parameter(std::string_view name) const;
};

// A method: a small value naming one registered description (compared by it).
class Method {
 public:
  // The method named `name`; anything else: an Error naming every method.
  explicit Method(std::string_view name);
  Method(const MethodInfo& info) : info_(&info) {}  // NOLINT: a description is its method
  const MethodInfo& info() const { return *info_; }
  const MethodInfo* operator->() const { return info_; }
  const char* name() const { return info_->name; }
  friend bool operator==(Method a, Method b) { return a.info_ == b.info_; }

 private:
  const MethodInfo* info_;
};
const char* to_string(Method m);

// Every method, in the order front ends list them (the text method first).
std::span<const Method> methods();
// The method a search of `kind` takes where none is named: bm25 for text, lc-rwmd for documents.
// Where a direction is asked that the kind's method lacks (symmetric text search), the
// documents' method, which has every direction.
Method default_method(QueryKind kind, std::optional<Direction> asked = std::nullopt);
// Adds a method defined outside the library (a test's, a user's), after the library's: every
// front end lists it and takes its parameters. Call it before any search (at static
// initialisation, or first thing in main); its name must be new and its parameters' names either
// new or described as the methods before it describe them.
void register_method(const MethodInfo& info);

// Its yes-or-no properties a user reads, by the names every front end gives them (JSON,
// Python): document_to_query, query_to_document, bounded, runs_on_gpu, explains.
std::vector<std::pair<const char*, bool>> method_properties(const MethodInfo& m);

// Every method's parameters, each once (as the first method that has it describes it), in the
// methods' order: the flags, JSON fields and keyword arguments the front ends take.
std::vector<const Parameter*> all_parameters();
// The description of parameter `name` (the first method's that has it), or null.
const Parameter* find_parameter(std::string_view name);
// The methods that have parameter `name`, as prose ("bm25 or hybrid").
std::string methods_with(std::string_view name);
// The parameters of `m` from those a front end was given by name, the rest at their defaults:
// each given value checked by its description whichever method it belongs to (a bad value is an
// error even where the method asked does not read it); a name no method has: an OptionError
// naming it.
ParameterValues method_parameters(Method m, const ParameterValues& given);
// The value of `m`'s parameter `name` in `values`, or its default (an Error where m lacks it).
double parameter_value(Method m, const ParameterValues& values, std::string_view name);
// An OptionError where `values` names a parameter no method has, or holds a value its
// description refuses (a parameter of another method than `m` is checked, and not read).
void check_parameters(Method m, const ParameterValues& values);

// The direction asked for (none: the method's default), or the older one_sided flag
// (document-to-query). Both at once, disagreeing: an Error.
Direction resolve_direction(const MethodInfo& m, std::optional<Direction> asked, bool one_sided);
// The names of the directions of `m`, in kDirections' order (JSON and Python list them), and as
// prose: "symmetric, document-to-query or query-to-document".
std::vector<const char*> directions(const MethodInfo& m);
std::string direction_names(const MethodInfo& m);
// Names as prose: "a, b or c".
std::string prose_list(const std::vector<const char*>& names);
// The names of the methods with `pred`, as prose: "wcd, rwmd or wmd".
template <typename Pred>
std::string method_names(Pred pred) {
  std::vector<const char*> names;
  for (const Method m : methods())
    if (pred(m.info())) names.push_back(m.name());
  return prose_list(names);
}
inline std::string method_names() {
  return method_names([](const MethodInfo&) { return true; });
}

}  // namespace lcrwmd
