#include "app/top_k.h"

#include <memory>

#include "app/cluster.h"
#include "app/rank_shard_commands.h"
#include "lcrwmd/plural.h"
#include "lcrwmd/segments.h"

namespace lcrwmd::app {

SearchResults top_k(const QueryFlags& f, const Loaded& l, std::size_t k, SearchStats& st) {
  Cluster& cluster = Cluster::current();
  const SearchOptions o = f.options();
  const auto t = Clock::now();
  const SearcherOptions so = f.searcher_options();
  SearchResults r;
  if (cluster.size() > 1) {
    const std::unique_ptr<IndexRanks> ranks = spread_index(l, so, f.distribute);
    r = together([&] { return ranks->searcher->search(ranks->queries, k, o, &st); });
  } else {
    r = CollectionSearcher(l.documents(), so).search(l.queries, k, o, &st);
  }
  note("search: %s x %s, %s, %.3f s (%s, %s)", plural(r.n_queries, "query").c_str(),
       plural(l.documents().n_docs(), "document").c_str(), describe(o).c_str(), since(t),
       plural(st.batches, "batch").c_str(), describe_backend(for_rank(cluster, so), st).c_str());
  if (cluster.size() > 1)
    note("  %d ranks, %s spread", cluster.size(), f.distribute == "docs" ? "documents" : "queries");
  report_refinement(o, st);
  return r;
}

}  // namespace lcrwmd::app
