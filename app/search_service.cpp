#include "app/search_service.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "lcrwmd/explain.h"
#include "lcrwmd/query.h"

namespace lcrwmd::app {
namespace {

using nlohmann::json;

// Optional field: absent gives `fallback`; present, it must be of the expected type.
template <typename T>
T field(const json& request, const char* name, T fallback) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return fallback;
  try {
    if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw RequestError(400, name, "expected true or false");
    } else if constexpr (std::is_integral_v<T>) {
      if (!it->is_number_integer()) throw RequestError(400, name, "expected an integer");
      if (it->get<long long>() < 0) throw RequestError(400, name, "must not be negative");
    } else {
      if (!it->is_string()) throw RequestError(400, name, "expected a string");
    }
    return it->get<T>();
  } catch (const json::exception& e) {
    throw RequestError(400, name, e.what());
  }
}

void require_object(const json& request) {
  if (!request.is_object()) throw RequestError(400, "body", "expected a JSON object");
}

}  // namespace

SearchService::SearchService(const Index& index, const StopWords* stopwords,
                             const Embeddings* embeddings, const SearcherOptions& searcher,
                             const ServiceOptions& options)
    : index_(index),
      stopwords_(stopwords),
      embeddings_(embeddings),
      searcher_(make_searcher(index, searcher)),
      cpu_precision_(describe_precision(searcher.cpu.precision)),
      options_(options),
      batcher_(*searcher_, options.batching) {
  for (const char* name : {"search", "explain", "info", "health", "metrics", "page"})
    endpoints_.push_back(
        {name, {}, std::vector<std::size_t>(std::size(kLatencyBuckets) + 1), 0, 0});
}

SearchOptions SearchService::to_options(const json& request, Method default_method) const {
  SearchOptions o;
  const std::string method = field<std::string>(request, "method", to_string(default_method));
  try {
    o.method = parse_method(method);
  } catch (const Error& e) {
    throw RequestError(400, "method", e.what());
  }
  o.symmetric = field<bool>(request, "symmetric", true);
  if (!o.symmetric && o.method == Method::wmd)
    throw RequestError(400, "symmetric", "wmd is symmetric: symmetric=false does not apply");
  o.act_steps = field<std::size_t>(request, "act_steps", 1);
  o.batch = options_.batching.max_batch;  // a micro-batch is one batch of the searcher
  return o;
}

// The request's texts as queries; names[i] is what the answer calls query i (its id, or its
// position). A query left with no known word is a 422 naming it.
QuerySet SearchService::to_queries(const json& queries, std::vector<json>& names) const {
  if (!queries.is_array() || queries.empty())
    throw RequestError(400, "queries", "expected a non-empty array of texts");
  if (queries.size() > options_.max_queries)
    throw RequestError(413, "queries",
                       std::to_string(queries.size()) + " queries; at most " +
                           std::to_string(options_.max_queries) + " per request");
  std::vector<RawDocument> docs;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const json& q = queries[i];
    const std::string where = "queries[" + std::to_string(i) + "]";
    RawDocument d;
    d.id = std::to_string(i);
    if (q.is_string()) {
      d.text = q.get<std::string>();
      names.emplace_back(i);
    } else if (q.is_object() && q.contains("text") && q["text"].is_string()) {
      d.text = q["text"].get<std::string>();
      const auto id = q.find("id");
      if (id != q.end() && !id->is_string() && !id->is_number_integer())
        throw RequestError(400, where + ".id", "expected a string or an integer");
      names.push_back(id != q.end() ? *id : json(i));
    } else {
      throw RequestError(400, where, "expected a text, or an object with a \"text\" string");
    }
    docs.push_back(std::move(d));
  }
  QueryOptions qo;
  qo.stopwords = stopwords_;
  qo.embeddings = embeddings_;
  TextReport report;
  QuerySet qs = make_query_set(index_, docs, qo, &report);
  if (!report.empty_documents.empty())
    throw RequestError(422, "queries[" + report.empty_documents.front() + "]",
                       "no word known to the index or its embeddings");
  return qs;
}

json SearchService::search(const json& request) {
  require_object(request);
  const auto queries = request.find("queries");
  if (queries == request.end()) throw RequestError(400, "queries", "missing");
  const std::size_t k = field<std::size_t>(request, "k", 10);
  if (k == 0 || k > options_.max_k)
    throw RequestError(400, "k", "must be 1.." + std::to_string(options_.max_k));
  const SearchOptions o = to_options(request, Method::lc_rwmd);
  std::vector<json> names;
  QuerySet qs = to_queries(*queries, names);
  const SearchResults r = batcher_.submit(std::move(qs), k, o).get();
  json results = json::array();
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    json neighbors = json::array();
    for (std::size_t t = 0; t < r.k; ++t) {
      const std::int64_t doc = r.indices[q * r.k + t];
      if (doc < 0) continue;
      const auto i = static_cast<std::size_t>(doc);
      neighbors.push_back({{"id", index_.doc_id(i)},
                           {"label", index_.label(i)},
                           {"distance", r.distances[q * r.k + t]}});
    }
    results.push_back({{"query", names[q]}, {"neighbors", std::move(neighbors)}});
  }
  return {{"results", std::move(results)}};
}

json SearchService::explain(const json& request) const {
  require_object(request);
  const auto text = request.find("query");
  if (text == request.end() || !text->is_string())
    throw RequestError(400, "query", "expected the query's text");
  const std::string doc_id = field<std::string>(request, "doc", "");
  const auto doc = index_.find_doc(doc_id);
  if (!doc) throw RequestError(404, "doc", "no document with id '" + doc_id + "'");
  const SearchOptions o = to_options(request, Method::wmd);
  std::vector<json> names;
  const QuerySet qs = to_queries(json::array({*text}), names);
  Explanation e;
  try {
    e = lcrwmd::explain(index_, qs, 0, *doc, o.method, o.symmetric, o.act_steps);
  } catch (const Error& err) {
    throw RequestError(400, "method", err.what());
  }
  const auto flows = [](const std::vector<WordFlow>& fs) {
    json out = json::array();
    for (const WordFlow& f : fs)
      out.push_back({{"query_word", f.query_word},
                     {"doc_word", f.doc_word},
                     {"mass", f.mass},
                     {"cost", f.cost}});
    return out;
  };
  json j = {{"doc", e.doc},
            {"label", index_.label(*doc)},
            {"method", to_string(e.method)},
            {"symmetric", e.symmetric},
            {"distance", e.distance},
            {"flows", flows(e.flows)}};
  if (e.method != Method::wmd) {
    j["doc_to_query"] = {{"distance", e.doc_to_query_distance},
                         {"set_distance", e.doc_to_query_set_distance},
                         {"flows", flows(e.doc_to_query)}};
    j["query_to_doc"] = {{"distance", e.query_to_doc_distance},
                         {"set_distance", !e.doc_to_query_set_distance},
                         {"flows", flows(e.query_to_doc)}};
  }
  return j;
}

json SearchService::info() const {
  return {{"documents", index_.n_docs()},
          {"vocabulary", index_.vocab_size()},
          {"dim", index_.dim()},
          {"backend", to_string(searcher_->backend())},
          {"precision", cpu_precision_},
          {"embeddings_for_unknown_words", embeddings_ != nullptr},
          {"max_batch", options_.batching.max_batch},
          {"max_wait_ms", static_cast<double>(options_.batching.max_wait.count()) / 1000.0},
          {"max_k", options_.max_k},
          {"max_queries_per_request", options_.max_queries},
          {"methods", {"wcd", "rwmd", "lc-rwmd", "act", "ict", "wmd"}}};
}

void SearchService::record(const std::string& endpoint, int status, double seconds) {
  std::lock_guard lock(metrics_mutex_);
  for (Endpoint& e : endpoints_) {
    if (e.name != endpoint) continue;
    auto it = std::find_if(e.by_status.begin(), e.by_status.end(),
                           [&](const auto& s) { return s.first == status; });
    if (it == e.by_status.end())
      e.by_status.emplace_back(status, 1);
    else
      ++it->second;
    const auto bucket =
        std::lower_bound(std::begin(kLatencyBuckets), std::end(kLatencyBuckets), seconds);
    ++e.latency[static_cast<std::size_t>(bucket - std::begin(kLatencyBuckets))];
    e.seconds += seconds;
    ++e.count;
  }
}

std::string SearchService::metrics() const {
  std::ostringstream out;
  {
    std::lock_guard lock(metrics_mutex_);
    out << "# HELP lcrwmd_requests_total HTTP requests answered, by endpoint and status.\n"
           "# TYPE lcrwmd_requests_total counter\n";
    for (const Endpoint& e : endpoints_)
      for (const auto& [status, n] : e.by_status)
        out << "lcrwmd_requests_total{endpoint=\"" << e.name << "\",code=\"" << status << "\"} "
            << n << "\n";
    out << "# HELP lcrwmd_request_seconds Time to answer a request.\n"
           "# TYPE lcrwmd_request_seconds histogram\n";
    for (const Endpoint& e : endpoints_) {
      if (e.count == 0) continue;
      std::size_t cumulative = 0;
      for (std::size_t b = 0; b <= std::size(kLatencyBuckets); ++b) {
        cumulative += e.latency[b];
        out << "lcrwmd_request_seconds_bucket{endpoint=\"" << e.name << "\",le=\"";
        if (b < std::size(kLatencyBuckets))
          out << kLatencyBuckets[b];
        else
          out << "+Inf";
        out << "\"} " << cumulative << "\n";
      }
      out << "lcrwmd_request_seconds_sum{endpoint=\"" << e.name << "\"} " << e.seconds << "\n"
          << "lcrwmd_request_seconds_count{endpoint=\"" << e.name << "\"} " << e.count << "\n";
    }
  }
  const MicroBatcher::Stats s = batcher_.stats();
  out << "# HELP lcrwmd_batch_queries Queries per micro-batch (one search of the index).\n"
         "# TYPE lcrwmd_batch_queries histogram\n";
  std::size_t cumulative = 0;
  for (std::size_t b = 0; b < s.batch_sizes.size(); ++b) {
    cumulative += s.batch_sizes[b];
    out << "lcrwmd_batch_queries_bucket{le=\"";
    if (b < std::size(MicroBatcher::kBatchBuckets))
      out << MicroBatcher::kBatchBuckets[b];
    else
      out << "+Inf";
    out << "\"} " << cumulative << "\n";
  }
  out << "lcrwmd_batch_queries_sum " << s.queries << "\nlcrwmd_batch_queries_count " << s.batches
      << "\n# HELP lcrwmd_queue_queries Queries waiting for a batch.\n"
         "# TYPE lcrwmd_queue_queries gauge\nlcrwmd_queue_queries "
      << s.queued
      << "\n# HELP lcrwmd_phase1_word_pairs_total (Vocabulary word, query) pairs whose nearest "
         "query words CPU phase 1 decided.\n"
         "# TYPE lcrwmd_phase1_word_pairs_total counter\nlcrwmd_phase1_word_pairs_total "
      << s.word_pairs
      << "\n# HELP lcrwmd_phase1_recomputed_total Word distances CPU phase 1 recomputed from the "
         "vectors where its low-precision bound could not decide.\n"
         "# TYPE lcrwmd_phase1_recomputed_total counter\nlcrwmd_phase1_recomputed_total "
      << s.recomputed << "\n";
  return out.str();
}

}  // namespace lcrwmd::app
