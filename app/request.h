#pragma once
// What `lcrwmd serve` reads from a request body, before any search: the JSON itself (well
// formed, UTF-8, no key twice, not nested deeper than a request can be), then each endpoint's
// fields. Anything else is a RequestError naming the field at fault; nothing here needs the
// index, so any bytes can be fed to it (fuzz/fuzz_request.cpp).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {

// A request the service refuses: the HTTP status and the field at fault.
struct RequestError : Error {
  RequestError(int http_status, std::string at, const std::string& message)
      : Error(at + ": " + message), status(http_status), field(std::move(at)) {}
  int status;
  std::string field;
};

struct RequestLimits {
  std::size_t max_k = 1000;           // larger k: 400
  std::size_t max_queries = 1024;     // queries in one request; more: 413
  std::size_t max_documents = 10000;  // documents one add may hold; more: 413
};

// The body as JSON: 400 "body" where it is empty, malformed (bytes that are not UTF-8
// included), repeats a key of one object or nests deeper than kMaxDepth.
inline constexpr std::size_t kMaxDepth = 16;
nlohmann::json parse_body(std::string_view body);

// POST /search: {"queries": [text | {"text": ..., "id": ...}, ...] or "like": a document's id,
// "k", "method", "direction" (or "symmetric"), "query_weights", "text", and each of the methods'
// parameters by its name ("act_steps", "bm25_k1", ...)}. Without a method, the default of the
// queries' kind (default_method): texts bm25's, a document's likes lc-rwmd's.
struct SearchRequest {
  std::optional<std::string> like;    // "more like this": the document's id, not among the answers
  std::vector<RawDocument> queries;   // ids: their positions
  std::vector<nlohmann::json> names;  // what the answer calls each query: its id or position
  std::size_t k = 10;
  SearchOptions options;
  QueryWeights weights = QueryWeights::index;
  bool with_text = false;  // each neighbour's text in the answer
};
SearchRequest parse_search(const nlohmann::json& body, const RequestLimits& limits);

// POST /explain: {"query": text, "doc": id, "method", "direction" (or "symmetric"),
// "query_weights", and the method's parameters ("act_steps")}.
struct ExplainRequest {
  RawDocument query;
  std::string doc;
  SearchOptions options;
  QueryWeights weights = QueryWeights::index;
};
ExplainRequest parse_explain(const nlohmann::json& body);

// POST /documents: {"documents": [{"id": ..., "label": ..., "text": ...}, ...]}. An id is a
// non-empty string without tabs or line breaks, given once per request; a label (optional) a
// string without them; a text a string, its tabs and line breaks read as spaces (a document is
// one line of a TSV file).
std::vector<RawDocument> parse_documents(const nlohmann::json& body, const RequestLimits& limits);

// An error answer (app/json_out.h's to_bytes writes it, whatever bytes it echoes).
nlohmann::json error_json(int status, const std::string& field, const std::string& message);

}  // namespace lcrwmd::app
