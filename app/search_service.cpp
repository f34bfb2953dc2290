#include "app/search_service.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <utility>

#include "app/json_out.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/explain.h"
#include "lcrwmd/query.h"
#include "lcrwmd/text.h"

namespace lcrwmd::app {
namespace {

using nlohmann::json;

}  // namespace

SearchService::SearchService(const std::string& path, const SearcherOptions& searcher,
                             const ServiceOptions& options)
    : path_(path),
      options_(options),
      cpu_precision_(describe_precision(searcher.cpu.precision)),
      batcher_(options.batching),
      served_(path, {.searcher = searcher, .verify = options.verify}) {
  const std::shared_ptr<const DocumentSnapshot> s = current();
  const Index& first = s->documents().segment(0);
  if (!options.stopwords.empty())
    check_stopwords(first, StopWords::load(options.stopwords, first.tokenizer_version()),
                    "--stopwords " + options.stopwords);
  if (!options.embeddings.empty()) {
    // Kept whole: later adds bring words of the file that no segment holds yet.
    embeddings_ = open_word_vectors(options.embeddings);
    for (std::size_t i = 0; i < s->documents().size(); ++i)
      check_embeddings(s->documents().segment(i), *embeddings_);
    // Every later segment's words come from the file the collection records: the segments
    // need no word-by-word check as they come.
    if (s->collection()) s->collection()->check_embeddings(options.embeddings);
  }
  for (const char* name : {"search", "explain", "info", "health", "metrics", "page", "documents"})
    endpoints_.push_back(
        {name, {}, std::vector<std::size_t>(std::size(kLatencyBuckets) + 1), 0, 0});
  if (s->collection())
    writer_ = std::make_unique<ServiceWriter>(
        path, served_,
        ServiceWriter::Options{options.embeddings, embeddings_.get(), options.merge,
                               options.write_wait_seconds});
}

SearchService::~SearchService() { close(); }

void SearchService::close() {
  batcher_.close();
  if (writer_) writer_->close();
}

template <typename Field>
QuerySet SearchService::to_queries(const DocumentSnapshot& s, const std::vector<RawDocument>& texts,
                                   QueryWeights weights, Method method, const Field& field) const {
  QueryOptions qo;
  qo.embeddings = embeddings_.get();
  qo.weights = weights;
  qo.keep_term_only = !method->vectors;
  TextReport report;
  QuerySet qs = s.documents().make_query_set(texts, qo, &report);
  if (!report.empty_documents.empty())
    throw RequestError(422, field(std::stoul(report.empty_documents.front())),
                       "no word known to the index or its embeddings");
  return qs;
}

json SearchService::search(const json& body) {
  SearchRequest request = parse_search(body, options_.limits);
  request.options.batch = options_.batching.max_batch;  // a micro-batch is one batch
  const std::vector<json>& names = request.names;
  const std::shared_ptr<const DocumentSnapshot> snap = current();  // the whole search sees this one
  const SegmentSet& docs = snap->documents();
  SearchResults r;
  if (request.like) {  // the document's own words as the query; itself not among the answers
    const auto doc = docs.find_doc(*request.like);
    if (!doc) throw RequestError(404, "like", "no document with id '" + *request.like + "'");
    const std::size_t self[] = {*doc};
    const std::int64_t own[] = {static_cast<std::int64_t>(*doc)};
    r = without_self(
        batcher_
            .submit(DocumentSnapshot::searcher_of(snap),
                    docs.documents_as_queries(self, request.options.method->reads_terms()),
                    request.k + 1, request.options)
            .get(),
        own, request.k);
  } else {
    QuerySet qs = to_queries(*snap, request.queries, request.weights, request.options.method,
                             [](std::size_t i) { return "queries[" + std::to_string(i) + "]"; });
    r = batcher_
            .submit(DocumentSnapshot::searcher_of(snap), std::move(qs), request.k, request.options)
            .get();
  }
  // A method that ranks by a score (bm25, hybrid) answers the score, higher first.
  const bool scores = request.options.method->answer == Answer::score;
  const char* ranked_by = scores ? "score" : "distance";
  json results = json::array();
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    json neighbors = json::array();
    for (std::size_t t = 0; t < r.k; ++t) {
      const std::int64_t doc = r.indices[q * r.k + t];
      if (doc < 0) continue;
      const auto i = static_cast<std::size_t>(doc);
      const float d = r.distances[q * r.k + t];
      json n = {{"id", docs.doc_id(i)}, {"label", docs.label(i)}, {ranked_by, scores ? -d : d}};
      if (request.with_text) n["text"] = docs.has_text() ? json(docs.text(i)) : json();
      neighbors.push_back(std::move(n));
    }
    results.push_back({{"query", names[q]}, {"neighbors", std::move(neighbors)}});
  }
  return {{"method", to_string(request.options.method)},
          {"direction", to_string(request.options.direction)},
          {"ranked_by", ranked_by},
          {"generation", snap->generation()},
          {"results", std::move(results)}};
}

json SearchService::explain(const json& body) const {
  const ExplainRequest request = parse_explain(body);
  const std::shared_ptr<const DocumentSnapshot> snap = current();
  const SegmentSet& docs = snap->documents();
  const auto doc = docs.find_doc(request.doc);
  if (!doc) throw RequestError(404, "doc", "no document with id '" + request.doc + "'");
  const SearchOptions& o = request.options;
  // A document's distance is its segment's business, but term statistics are the whole
  // collection's: a lexical method is explained over one index only.
  if (o.method->reads_terms() && snap->one_index() == nullptr)
    throw RequestError(409, "method",
                       std::string(to_string(o.method)) +
                           " is explained over a collection of one segment "
                           "without deletions; `lcrwmd compact --index " +
                           path_ + "` makes it one");
  const QuerySet qs = to_queries(*snap, {request.query}, request.weights, o.method,
                                 [](std::size_t) { return "query"; });
  const auto [segment, local] = docs.locate(*doc);
  Explanation e;
  try {
    e = lcrwmd::explain(docs.segment(segment), docs.for_segment(qs, segment), 0, local, o.method,
                        o.direction, o.parameters);
  } catch (const Error& err) {
    throw RequestError(400, "method", err.what());
  }
  json j = explanation_json(e);
  j.erase("query");  // the request's own text, not worth echoing
  j["label"] = docs.label(*doc);
  return j;
}

json SearchService::document(const std::string& id) const {
  const std::shared_ptr<const DocumentSnapshot> snap = current();
  const SegmentSet& docs = snap->documents();
  const auto doc = docs.find_doc(id);
  if (!doc) throw RequestError(404, "id", "no document with id '" + id + "'");
  return {{"id", id},
          {"label", docs.label(*doc)},
          {"text", docs.has_text() ? json(docs.text(*doc)) : json()},
          {"generation", snap->generation()}};
}

json SearchService::add(const json& body) {
  std::vector<RawDocument> docs = parse_documents(body, options_.limits);
  if (!writer_)
    throw RequestError(409, "documents",
                       "the service reads an index file, which does not change: serve a "
                       "collection (lcrwmd build --collection) to take documents");
  ServiceWriter::Added a;
  try {
    a = writer_->add(std::move(docs));
  } catch (const NothingToAdd& e) {
    throw RequestError(422, "documents", e.what());
  } catch (const CollectionBusy& e) {
    throw RequestError(503, "collection", e.what());
  }
  return {{"added", a.added},
          {"replaced", a.replaced},
          {"not_indexed", std::move(a.not_indexed)},
          {"generation", a.generation},
          {"documents", a.documents}};
}

json SearchService::remove(const std::string& id) {
  if (!writer_)
    throw RequestError(409, "id",
                       "the service reads an index file, which does not change: serve a "
                       "collection (lcrwmd build --collection) to delete documents");
  const std::shared_ptr<const DocumentSnapshot> snap = current();
  if (!snap->documents().find_doc(id))
    throw RequestError(404, "id", "no document with id '" + id + "'");
  if (snap->documents().n_docs() == 1)
    throw RequestError(409, "id", "'" + id + "' is the last document; a collection keeps one");
  CollectionChange c;
  try {
    c = writer_->remove(id);
  } catch (const CollectionBusy& e) {
    throw RequestError(503, "collection", e.what());
  }
  if (c.deleted == 0)  // another process deleted it meanwhile
    throw RequestError(404, "id", "no document with id '" + id + "'");
  return {{"deleted", id},
          {"generation", c.generation},
          {"documents", current()->documents().n_docs()}};
}

json SearchService::info() const {
  const std::shared_ptr<const DocumentSnapshot> snap = current();
  const SegmentSet& docs = snap->documents();
  json methods = json::array(), names = json::array();
  for (const Method m : lcrwmd::methods()) {
    methods.push_back(method_json(m.info()));
    names.push_back(m.name());
  }
  json collection;  // null: an index file
  if (writer_)
    collection = {{"generation", snap->generation()},
                  {"segments", snap->collection()->n_segments()},
                  {"deleted", snap->collection()->n_deleted()},
                  {"merge", options_.merge}};
  return {{"documents", docs.n_docs()},
          {"vocabulary", docs.vocab_size()},
          {"dim", docs.dim()},
          {"backend", to_string(snap->searcher().backend())},
          {"precision", cpu_precision_},
          {"embeddings_for_unknown_words", embeddings_ != nullptr},
          {"has_text", docs.has_text()},
          {"collection", std::move(collection)},
          {"max_batch", options_.batching.max_batch},
          {"max_wait_ms", static_cast<double>(options_.batching.max_wait.count()) / 1000.0},
          {"max_k", options_.limits.max_k},
          {"max_queries_per_request", options_.limits.max_queries},
          {"methods", std::move(names)},
          {"method_details", std::move(methods)},
          {"default_method", to_string(default_method(QueryKind::text))},
          {"like_method", to_string(default_method(QueryKind::document))}};
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
  const std::shared_ptr<const DocumentSnapshot> snap = current();
  out << "# HELP lcrwmd_documents Documents searched (a collection's live documents).\n"
         "# TYPE lcrwmd_documents gauge\nlcrwmd_documents "
      << snap->documents().n_docs() << "\n";
  if (writer_) {
    out << "# HELP lcrwmd_collection_generation The collection's commit being searched.\n"
           "# TYPE lcrwmd_collection_generation gauge\nlcrwmd_collection_generation "
        << snap->generation()
        << "\n# HELP lcrwmd_collection_segments Segments of the collection being searched.\n"
           "# TYPE lcrwmd_collection_segments gauge\nlcrwmd_collection_segments "
        << snap->collection()->n_segments()
        << "\n# HELP lcrwmd_merges_total Background merges committed.\n"
           "# TYPE lcrwmd_merges_total counter\nlcrwmd_merges_total "
        << writer_->merges()
        << "\n# HELP lcrwmd_adds_total Adds (POST /documents) the writer answered.\n"
           "# TYPE lcrwmd_adds_total counter\nlcrwmd_adds_total "
        << writer_->adds()
        << "\n# HELP lcrwmd_add_commits_total Commits of adds (adds arriving together share "
           "one).\n# TYPE lcrwmd_add_commits_total counter\nlcrwmd_add_commits_total "
        << writer_->commits() << "\n";
  }
  return out.str();
}

}  // namespace lcrwmd::app
