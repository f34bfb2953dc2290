#pragma once
// What `lcrwmd serve` answers, apart from HTTP: JSON requests in, JSON answers out, the
// micro-batcher between them and the resident snapshot of the documents, the writes of a
// collection, and the counters /metrics shows.
#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/micro_batcher.h"
#include "app/request.h"
#include "app/service_writer.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/text.h"

namespace lcrwmd::app {

struct ServiceOptions {
  MicroBatcher::Options batching;
  RequestLimits limits;
  // Query words the documents lack take their vectors from here (empty: they are dropped). A
  // collection's adds read new words from it too: it must then be the file the collection
  // records (or a copy), which an empty one means for adds.
  std::string embeddings;
  std::string stopwords;  // must be the documents' own, where given
  bool verify = true;     // check the files' checksums as they open
  // A collection: merge its segments after adds (the merge policy, lcrwmd/collection.h) in the
  // background, so that an add answers as soon as it is durable.
  bool merge = true;
  double write_wait_seconds = 30;  // for another process holding the collection's writer lock
};

class SearchService {
 public:
  // `path`: an index file, or a collection directory (which POST /documents and DELETE
  // /documents/ID change). An Error where it cannot be read or the options disagree with it.
  SearchService(const std::string& path, const SearcherOptions& searcher,
                const ServiceOptions& options);
  ~SearchService();
  SearchService(const SearchService&) = delete;
  SearchService& operator=(const SearchService&) = delete;

  // POST /search and /explain bodies (parsed); throw RequestError for bad requests.
  nlohmann::json search(const nlohmann::json& request);
  nlohmann::json explain(const nlohmann::json& request) const;
  // GET /documents/ID: its id, label and text (where kept); a 404 where no live document has it.
  nlohmann::json document(const std::string& id) const;
  // POST /documents (added, or replacing the live document of the same id) and DELETE
  // /documents/ID: answered once the change is committed (durable) and every search that
  // starts after it sees it. A 409 where the service reads an index file.
  nlohmann::json add(const nlohmann::json& request);
  nlohmann::json remove(const std::string& id);
  nlohmann::json info() const;
  // Whether it serves a collection (which takes documents).
  bool collection() const { return writer_ != nullptr; }
  // Prometheus text exposition of the counters.
  std::string metrics() const;
  // A drain: searches and adds waiting run now, new ones are refused (QueueFull); the
  // collection's writer stops (a merge running finishes its commit first).
  void close();
  // Counts one HTTP answer (for /metrics).
  void record(const std::string& endpoint, int status, double seconds);

 private:
  std::shared_ptr<const DocumentSnapshot> current() const { return served_.acquire(); }
  // The texts as queries for `method`; one left with no known word (a lexical method's: and no
  // term) is a 422 naming it (field(i)).
  template <typename Field>
  QuerySet to_queries(const DocumentSnapshot& s, const std::vector<RawDocument>& texts,
                      QueryWeights weights, Method method, const Field& field) const;
  const std::string path_;
  const ServiceOptions options_;
  std::unique_ptr<WordVectors> embeddings_;
  std::string cpu_precision_;  // what CPU searches run phase 1 at
  MicroBatcher batcher_;
  CollectionReader served_;
  std::unique_ptr<ServiceWriter> writer_;  // a collection's

  static constexpr double kLatencyBuckets[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                               0.1,   0.2,   0.5,   1,    2,    5};
  struct Endpoint {
    std::string name;
    std::vector<std::pair<int, std::size_t>> by_status;
    std::vector<std::size_t> latency;  // per bucket, then +Inf
    double seconds = 0;
    std::size_t count = 0;
  };
  mutable std::mutex metrics_mutex_;
  std::vector<Endpoint> endpoints_;
};

}  // namespace lcrwmd::app
