#include "app/search_service.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "app/json_out.h"
#include "lcrwmd/explain.h"
#include "lcrwmd/query.h"

namespace lcrwmd::app {
namespace {

using nlohmann::json;

}  // namespace

SearchService::SearchService(const Index& index, const Embeddings* embeddings,
                             const SearcherOptions& searcher, const ServiceOptions& options)
    : index_(index),
      embeddings_(embeddings),
      searcher_(make_searcher(index, searcher)),
      cpu_precision_(describe_precision(searcher.cpu.precision)),
      options_(options),
      batcher_(*searcher_, options.batching) {
  for (const char* name : {"search", "explain", "info", "health", "metrics", "page"})
    endpoints_.push_back(
        {name, {}, std::vector<std::size_t>(std::size(kLatencyBuckets) + 1), 0, 0});
}

template <typename Field>
QuerySet SearchService::to_queries(const std::vector<RawDocument>& texts, QueryWeights weights,
                                   Method method, const Field& field) const {
  QueryOptions qo;
  qo.embeddings = embeddings_;
  qo.weights = weights;
  qo.keep_term_only = describe(method).lexical;
  TextReport report;
  QuerySet qs = make_query_set(index_, texts, qo, &report);
  if (!report.empty_documents.empty())
    throw RequestError(422, field(std::stoul(report.empty_documents.front())),
                       "no word known to the index or its embeddings");
  return qs;
}

json SearchService::search(const json& body) {
  SearchRequest request = parse_search(body, options_.limits);
  request.options.batch = options_.batching.max_batch;  // a micro-batch is one batch
  const std::vector<json>& names = request.names;
  SearchResults r;
  if (request.like) {  // the document's own words as the query; itself not among the answers
    const auto doc = index_.find_doc(*request.like);
    if (!doc) throw RequestError(404, "like", "no document with id '" + *request.like + "'");
    const std::size_t self[] = {*doc};
    const std::int64_t own[] = {static_cast<std::int64_t>(*doc)};
    r = without_self(batcher_
                         .submit(query_set_from_index(index_, self,
                                                      describe(request.options.method).reads_terms),
                                 request.k + 1, request.options)
                         .get(),
                     own, request.k);
  } else {
    QuerySet qs = to_queries(request.queries, request.weights, request.options.method,
                             [](std::size_t i) { return "queries[" + std::to_string(i) + "]"; });
    r = batcher_.submit(std::move(qs), request.k, request.options).get();
  }
  json results = json::array();
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    json neighbors = json::array();
    for (std::size_t t = 0; t < r.k; ++t) {
      const std::int64_t doc = r.indices[q * r.k + t];
      if (doc < 0) continue;
      const auto i = static_cast<std::size_t>(doc);
      json n = {{"id", index_.doc_id(i)},
                {"label", index_.label(i)},
                {"distance", r.distances[q * r.k + t]}};
      if (request.with_text) n["text"] = index_.has_text() ? json(index_.text(i)) : json();
      neighbors.push_back(std::move(n));
    }
    results.push_back({{"query", names[q]}, {"neighbors", std::move(neighbors)}});
  }
  return {{"method", to_string(request.options.method)},
          {"direction", to_string(request.options.direction)},
          {"results", std::move(results)}};
}

json SearchService::explain(const json& body) const {
  const ExplainRequest request = parse_explain(body);
  const auto doc = index_.find_doc(request.doc);
  if (!doc) throw RequestError(404, "doc", "no document with id '" + request.doc + "'");
  const SearchOptions& o = request.options;
  const QuerySet qs =
      to_queries({request.query}, request.weights, o.method, [](std::size_t) { return "query"; });
  Explanation e;
  try {
    e = lcrwmd::explain(index_, qs, 0, *doc, o.method, o.direction, o.act_steps);
  } catch (const Error& err) {
    throw RequestError(400, "method", err.what());
  }
  json j = explanation_json(e);
  j.erase("query");  // the request's own text, not worth echoing
  j["label"] = index_.label(*doc);
  return j;
}

json SearchService::info() const {
  json methods = json::array(), names = json::array();
  for (const MethodInfo& m : lcrwmd::methods()) {
    methods.push_back(method_json(m));
    names.push_back(m.name);
  }
  return {{"documents", index_.n_docs()},
          {"vocabulary", index_.vocab_size()},
          {"dim", index_.dim()},
          {"backend", to_string(searcher_->backend())},
          {"precision", cpu_precision_},
          {"embeddings_for_unknown_words", embeddings_ != nullptr},
          {"has_text", index_.has_text()},
          {"max_batch", options_.batching.max_batch},
          {"max_wait_ms", static_cast<double>(options_.batching.max_wait.count()) / 1000.0},
          {"max_k", options_.limits.max_k},
          {"max_queries_per_request", options_.limits.max_queries},
          {"methods", std::move(names)},
          {"method_details", std::move(methods)},
          {"default_method", to_string(kTextQueryMethod)},
          {"like_method", to_string(SearchOptions{}.method)}};
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
