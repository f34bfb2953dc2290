#pragma once
// What `lcrwmd serve` answers, apart from HTTP: JSON requests in, JSON answers out, the
// micro-batcher between them and the resident searcher, and the counters /metrics shows.
#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/micro_batcher.h"
#include "app/request.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/text.h"

namespace lcrwmd::app {

struct ServiceOptions {
  MicroBatcher::Options batching;
  RequestLimits limits;
};

class SearchService {
 public:
  // The index and embeddings (checked against it: check_embeddings) must outlive the service.
  SearchService(const Index& index, const Embeddings* embeddings, const SearcherOptions& searcher,
                const ServiceOptions& options);

  // POST /search and /explain bodies (parsed); throw RequestError for bad requests.
  nlohmann::json search(const nlohmann::json& request);
  nlohmann::json explain(const nlohmann::json& request) const;
  nlohmann::json info() const;
  // Prometheus text exposition of the counters.
  std::string metrics() const;
  // A drain: searches waiting run now, new ones are refused (QueueFull).
  void close() { batcher_.close(); }
  // Counts one HTTP answer (for /metrics).
  void record(const std::string& endpoint, int status, double seconds);

 private:
  // The texts as queries for `method`; one left with no known word (a lexical method's: and no
  // term) is a 422 naming it (field(i)).
  template <typename Field>
  QuerySet to_queries(const std::vector<RawDocument>& texts, QueryWeights weights, Method method,
                      const Field& field) const;

  const Index& index_;
  const Embeddings* embeddings_;
  std::unique_ptr<Searcher> searcher_;
  std::string cpu_precision_;  // what CPU searches run phase 1 at
  ServiceOptions options_;
  MicroBatcher batcher_;

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
