#include "app/request.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "app/json_out.h"

namespace lcrwmd::app {
namespace {

using nlohmann::json;

// Every key of `request` must be one of `known`: a misspelt option is an error, not a default.
void only(const json& request, const std::vector<std::string>& known, const std::string& at) {
  for (const auto& item : request.items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string expected;
    for (const std::string& k : known) expected += (expected.empty() ? "" : ", ") + k;
    throw RequestError(400, at + item.key(), "unknown field (expected " + expected + ")");
  }
}

// `fields`, then every method's parameters: what a search or explain request may give.
std::vector<std::string> with_parameters(std::initializer_list<const char*> fields) {
  std::vector<std::string> known(fields.begin(), fields.end());
  for (const Parameter* p : all_parameters()) known.emplace_back(p->name);
  return known;
}

// An optional integer field from lo to hi; the same words for every way of missing it.
std::uint64_t integer(const json& request, const char* name, std::uint64_t fallback,
                      std::uint64_t lo, std::uint64_t hi) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return fallback;
  const bool in_range = (it->is_number_unsigned() || (it->is_number_integer() && *it >= 0)) &&
                        it->get<std::uint64_t>() >= lo && it->get<std::uint64_t>() <= hi;
  if (!in_range)
    throw RequestError(400, name,
                       "expected an integer from " + std::to_string(lo) + " to " +
                           std::to_string(hi) + ", got " + to_bytes(*it));
  return it->get<std::uint64_t>();
}

bool boolean(const json& request, const char* name, bool fallback) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw RequestError(400, name, "expected true or false");
  return it->get<bool>();
}

std::string text(const json& request, const char* name, const std::string& fallback) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw RequestError(400, name, "expected a string");
  return it->get<std::string>();
}

void require_object(const json& request) {
  if (!request.is_object()) throw RequestError(400, "body", "expected a JSON object");
}

// The methods' parameters the request gives (each a field named as its description names it),
// each a number of its kind: those within their ranges, the library checks (method_parameters).
ParameterValues given_parameters(const json& request) {
  ParameterValues given;
  for (const Parameter* p : all_parameters()) {
    const auto it = request.find(p->name);
    if (it == request.end() || it->is_null()) continue;
    const bool integer = p->kind == Parameter::Kind::integer;
    if (integer ? !(it->is_number_unsigned() || it->is_number_integer()) : !it->is_number())
      throw RequestError(400, p->name,
                         std::string("expected ") + (integer ? "an integer" : "a number") +
                             ", got " + to_bytes(*it));
    given.set(p->name, it->get<double>());
  }
  return given;
}

// method, direction (or the older "symmetric": false, document-to-query) and the method's
// parameters, checked by the library's rules (lcrwmd/search.h). Without a method, `fixed` where
// given, else the default of the queries' kind for the direction asked.
SearchOptions options(const json& request, QueryKind kind,
                      std::optional<Method> fixed = std::nullopt) {
  SearchOptions o;
  const bool symmetric = boolean(request, "symmetric", true);
  std::optional<Direction> asked;
  try {
    if (request.contains("direction")) asked = parse_direction(text(request, "direction", ""));
  } catch (const Error& e) {
    throw RequestError(400, "direction", e.what());
  }
  if (!symmetric && !asked) asked = Direction::document_to_query;
  try {
    o.method =
        Method(text(request, "method", to_string(fixed ? *fixed : default_method(kind, asked))));
  } catch (const Error& e) {
    throw RequestError(400, "method", e.what());
  }
  try {
    o.direction = resolve_direction(o.method.info(), asked, !symmetric);
  } catch (const Error& e) {
    throw RequestError(400, "symmetric", e.what());
  }
  try {
    o.parameters = method_parameters(o.method, given_parameters(request));
    check_options(o);
  } catch (const OptionError& e) {  // named as the request spelt it
    throw RequestError(400, e.option() == "direction" && !symmetric ? "symmetric" : e.option(),
                       e.what());
  }
  return o;
}

QueryWeights query_weights(const json& request, Direction direction) {
  try {
    return parse_query_weights(text(request, "query_weights", "auto"), direction);
  } catch (const Error& e) {
    throw RequestError(400, "query_weights", e.what());
  }
}

// Rejects a key seen twice in one object and nesting past kMaxDepth while parsing.
class Checks {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (static_cast<std::size_t>(depth) > kMaxDepth)
      throw RequestError(400, "body",
                         "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    switch (event) {
      case json::parse_event_t::object_start:
        keys_.emplace_back();
        break;
      case json::parse_event_t::object_end:
        keys_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys_.back().insert(parsed.get<std::string>()).second)
          throw RequestError(400, parsed.get<std::string>(), "given twice");
        break;
      default:
        break;
    }
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

json parse_body(std::string_view body) {
  if (body.empty()) throw RequestError(400, "body", "empty: expected a JSON object");
  Checks checks;
  try {
    return json::parse(body, std::ref(checks));
  } catch (const json::exception& e) {
    throw RequestError(400, "body", std::string("malformed JSON: ") + e.what());
  }
}

SearchRequest parse_search(const json& body, const RequestLimits& limits) {
  require_object(body);
  only(body,
       with_parameters(
           {"queries", "like", "k", "method", "direction", "symmetric", "query_weights", "text"}),
       "");
  SearchRequest r;
  r.k = integer(body, "k", 10, 1, limits.max_k);
  r.with_text = boolean(body, "text", false);
  const auto queries = body.find("queries");
  if (const auto like = body.find("like"); like != body.end()) {
    if (queries != body.end())
      throw RequestError(400, "like", "a document's id or queries, not both");
    if (!like->is_string()) throw RequestError(400, "like", "expected a document's id");
    r.like = like->get<std::string>();
    r.names.emplace_back(*r.like);
    r.options = options(body, QueryKind::document);
    r.weights = query_weights(body, r.options.direction);
    return r;
  }
  if (queries == body.end()) throw RequestError(400, "queries", "missing (or give \"like\")");
  if (!queries->is_array() || queries->empty())
    throw RequestError(400, "queries", "expected a non-empty array of texts");
  if (queries->size() > limits.max_queries)
    throw RequestError(413, "queries",
                       std::to_string(queries->size()) + " queries; at most " +
                           std::to_string(limits.max_queries) + " per request");
  r.options = options(body, QueryKind::text);
  r.weights = query_weights(body, r.options.direction);
  for (std::size_t i = 0; i < queries->size(); ++i) {
    const json& q = (*queries)[i];
    const std::string at = "queries[" + std::to_string(i) + "]";
    RawDocument d;
    d.id = std::to_string(i);
    if (q.is_string()) {
      d.text = q.get<std::string>();
      r.names.emplace_back(i);
    } else if (q.is_object()) {
      only(q, {"text", "id"}, at + ".");
      const auto t = q.find("text");
      if (t == q.end() || !t->is_string()) throw RequestError(400, at + ".text", "expected a text");
      d.text = t->get<std::string>();
      const auto id = q.find("id");
      if (id != q.end() && !id->is_string() && !id->is_number_integer())
        throw RequestError(400, at + ".id", "expected a string or an integer");
      r.names.push_back(id != q.end() ? *id : json(i));
    } else {
      throw RequestError(400, at, "expected a text, or an object with a \"text\" string");
    }
    r.queries.push_back(std::move(d));
  }
  return r;
}

ExplainRequest parse_explain(const json& body) {
  require_object(body);
  only(body, with_parameters({"query", "doc", "method", "direction", "symmetric", "query_weights"}),
       "");
  ExplainRequest r;
  const auto query = body.find("query");
  if (query == body.end() || !query->is_string())
    throw RequestError(400, "query", "expected the query's text");
  r.query.id = "0";
  r.query.text = query->get<std::string>();
  const auto doc = body.find("doc");
  if (doc == body.end() || !doc->is_string())
    throw RequestError(400, "doc", "expected a document's id");
  r.doc = doc->get<std::string>();
  r.options = options(body, QueryKind::text, Method("wmd"));
  r.weights = query_weights(body, r.options.direction);
  return r;
}

std::vector<RawDocument> parse_documents(const json& body, const RequestLimits& limits) {
  require_object(body);
  only(body, {"documents"}, "");
  const auto docs = body.find("documents");
  if (docs == body.end() || !docs->is_array() || docs->empty())
    throw RequestError(400, "documents",
                       "expected a non-empty array of {\"id\", \"label\", \"text\"} objects");
  if (docs->size() > limits.max_documents)
    throw RequestError(413, "documents",
                       std::to_string(docs->size()) + " documents; at most " +
                           std::to_string(limits.max_documents) + " per request");
  std::vector<RawDocument> out;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < docs->size(); ++i) {
    const json& d = (*docs)[i];
    const std::string at = "documents[" + std::to_string(i) + "]";
    if (!d.is_object()) throw RequestError(400, at, "expected an object with \"id\" and \"text\"");
    only(d, {"id", "label", "text"}, at + ".");
    // Each field named with its document's place, as the errors below name them.
    const auto field = [&](const char* name, const char* expected,
                           bool required) -> std::optional<std::string> {
      const auto it = d.find(name);
      if (!required && (it == d.end() || it->is_null())) return std::nullopt;
      if (it == d.end() || !it->is_string()) throw RequestError(400, at + "." + name, expected);
      return it->get<std::string>();
    };
    RawDocument doc;
    doc.line = i + 1;
    doc.id = field("id", "expected a non-empty string", true).value();
    doc.label = field("label", "expected a string", false).value_or("");
    doc.text = field("text", "expected a text", true).value();
    if (doc.id.empty()) throw RequestError(400, at + ".id", "expected a non-empty string");
    for (const auto& [suffix, value] : {std::pair{".id", &doc.id}, {".label", &doc.label}})
      if (value->find_first_of("\t\r\n") != std::string::npos)
        throw RequestError(400, at + suffix, "a tab or line break cannot be part of it");
    if (const auto [it, fresh] = seen.emplace(doc.id, i); !fresh)
      throw RequestError(400, at + ".id",
                         "'" + doc.id + "' is documents[" + std::to_string(it->second) +
                             "]'s id too: one version of a document per request");
    std::replace_if(
        doc.text.begin(), doc.text.end(),
        [](char c) { return c == '\t' || c == '\r' || c == '\n'; }, ' ');
    out.push_back(std::move(doc));
  }
  return out;
}

json error_json(int status, const std::string& field, const std::string& message) {
  return {{"error", message}, {"field", field}, {"status", status}};
}

}  // namespace lcrwmd::app
