#include "app/distributed.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/topk.h"
#include "lcrwmd/wire.h"

namespace lcrwmd::app {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Layout parse_layout(std::string_view s) {
  if (s == "docs") return Layout::documents;
  if (s == "queries") return Layout::queries;
  throw Error("unknown layout '" + std::string(s) + "' (expected docs or queries)");
}

SearcherOptions for_rank(const Cluster& cluster, SearcherOptions options) {
  if (cluster.size() > 1 && options.backend != Backend::cpu) {
    const std::size_t devices = gpu_device_count();
    if (devices > 0) options.gpu.device = cluster.local_rank() % static_cast<int>(devices);
  }
  return options;
}

DistributedSearcher::DistributedSearcher(Cluster& cluster, const Index& index,
                                         const SearcherOptions& options, Layout layout)
    : cluster_(cluster), index_(index), options_(for_rank(cluster, options)), layout_(layout) {
  cluster_.step([&] {
    if (cluster_.size() > 1 && layout_ == Layout::documents) {
      const Part p = part_of(index_.n_docs(), cluster_.rank(), cluster_.size());
      if (p.begin == p.end) return;  // more ranks than documents
      shard_ = index_.shard(p.begin, p.end);
      searcher_ = make_searcher(*shard_, options_);
    } else {
      searcher_ = make_searcher(index_, options_);
    }
  });
}

SearchResults DistributedSearcher::search(const QuerySet& queries, std::size_t k,
                                          const SearchOptions& options, SearchStats* stats,
                                          ExchangeTimes* times) const {
  check_k(k);
  check_options(options);
  if (cluster_.size() == 1) return searcher_->search(queries, k, options, stats);
  Cluster& cluster = cluster_;
  const Index& index = index_;
  const Layout layout = layout_;
  const auto start = std::chrono::steady_clock::now();
  SearchResults local;
  SearchStats local_stats;
  cluster.step([&] {
    if (!searcher_) {
      local.n_queries = queries.size();
    } else if (layout == Layout::documents) {
      local = searcher_->search(queries, k, options, &local_stats);
    } else {
      const Part p = part_of(queries.size(), cluster.rank(), cluster.size());
      local = searcher_->search(subset(queries, p.begin, p.end), k, options, &local_stats);
    }
  });
  const double local_seconds = seconds_since(start);
  cluster.barrier();  // apart from the gather: what waiting for the slowest rank costs
  const double waited = seconds_since(start) - local_seconds;
  const std::vector<std::string> parts = cluster.gather(pack(local, local_stats));
  SearchResults out;
  if (!cluster.root()) return out;

  SearchStats total;
  total.backend = local_stats.backend;
  out.n_queries = queries.size();
  out.k = std::min(k, index.n_docs());
  if (layout == Layout::documents) {
    std::vector<std::vector<std::vector<Neighbor>>> shards(parts.size());
    for (std::size_t r = 0; r < parts.size(); ++r) {
      SearchResults part;
      SearchStats st;
      unpack_results(parts[r], part, st);
      accumulate(total, st);
      const std::size_t offset = part_of(index.n_docs(), static_cast<int>(r), cluster.size()).begin;
      shards[r].resize(queries.size());
      for (std::size_t q = 0; q < part.n_queries; ++q)
        for (std::size_t t = 0; t < part.k; ++t) {
          const std::int64_t doc = part.indices[q * part.k + t];
          if (doc >= 0)
            shards[r][q].push_back(
                {part.distances[q * part.k + t], doc + static_cast<std::int64_t>(offset)});
        }
    }
    const auto merged = merge_topk(shards, queries.size(), out.k);
    out.distances.assign(out.n_queries * out.k, 0.0f);
    out.indices.assign(out.n_queries * out.k, -1);
    for (std::size_t q = 0; q < merged.size(); ++q)
      for (std::size_t t = 0; t < merged[q].size(); ++t) {
        out.distances[q * out.k + t] = merged[q][t].distance;
        out.indices[q * out.k + t] = merged[q][t].index;
      }
  } else {
    for (const std::string& bytes : parts) {
      SearchResults part;
      SearchStats st;
      unpack_results(bytes, part, st);
      accumulate(total, st);
      out.distances.insert(out.distances.end(), part.distances.begin(), part.distances.end());
      out.indices.insert(out.indices.end(), part.indices.begin(), part.indices.end());
    }
  }
  if (stats) *stats = total;
  if (times) *times = {local_seconds, waited, seconds_since(start) - local_seconds - waited};
  return out;
}

}  // namespace lcrwmd::app
