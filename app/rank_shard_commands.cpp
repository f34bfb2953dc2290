// search and pairwise with a part of the collection per mpirun rank (rank_shard_commands.h).
#include "app/rank_shard_commands.h"

#include <cstdio>
#include <optional>

#include "app/cluster.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/error.h"
#include "lcrwmd/npy_writer.h"
#include "lcrwmd/plural.h"
#include "lcrwmd/rank_queries.h"
#include "lcrwmd/rank_shards.h"
#include "lcrwmd/segments.h"

namespace lcrwmd::app {
namespace {

// This rank's part (a shard file, or a run of the collection's segments), the ranks'
// collection, and rank 0's queries read over it.
struct RankInput {
  std::optional<Index> shard;
  std::optional<Collection> segments;
  std::optional<SegmentSet> mine;
  std::unique_ptr<RankShards> shards;
  QuerySet queries;
};

std::unique_ptr<RankInput> open_shards(const QueryFlags& f) {
  Cluster& cluster = Cluster::current();
  const bool collection = f.indexes.size() == 1;
  together([&] {
    if (!collection && f.indexes.size() != static_cast<std::size_t>(cluster.size()))
      throw Error("--index given " + std::to_string(f.indexes.size()) + " times under mpirun -np " +
                  std::to_string(cluster.size()) +
                  ": give one shard per rank, or one index for the ranks to share");
  });
  set_threads(f.threads);
  auto in = std::make_unique<RankInput>();
  const auto rank = static_cast<std::size_t>(cluster.rank());
  cluster.step([&] {
    const auto t = Clock::now();
    if (collection) {
      in->segments = Collection::open_share(f.indexes[0], rank,
                                            static_cast<std::size_t>(cluster.size()), !f.no_verify);
      in->mine.emplace(in->segments->documents());
      note("collection %s, rank 0's %s: %zu documents (%zu deleted) (%.2f s)", f.indexes[0].c_str(),
           plural(in->segments->n_segments(), "segment").c_str(), in->mine->n_docs(),
           in->segments->n_deleted(), since(t));
    } else {
      in->shard = load_index(f.indexes[rank], !f.no_verify);
      in->mine.emplace(std::vector<const Index*>{&*in->shard});
      note("shard of rank 0, %s: %zu documents, %zu words (%.2f s)", in->shard->source().c_str(),
           in->shard->n_docs(), in->shard->vocab_size(), since(t));
    }
  });
  // The ranks' runs of segments must be of one commit: a writer's commit between their opening
  // would mix two.
  if (collection)
    cluster.step([&] {
      const std::vector<std::string> read =
          cluster.gather(std::to_string(in->segments->generation()));
      for (std::size_t r = 1; r < read.size(); ++r)
        if (read[r] != read[0])
          throw Error(f.indexes[0] + ": committed to while the ranks opened it (rank 0 read " +
                      "generation " + read[0] + ", rank " + std::to_string(r) + " " + read[r] +
                      "): run again");
    });
  in->shards = together([&] {
    return std::make_unique<RankShards>(cluster, *in->mine,
                                        for_rank(cluster, f.searcher_options()));
  });
  QueryText text;
  cluster.step([&] {
    if (cluster.root()) text = read_query_text(f, *in->mine);
  });
  QueryOptions qo = f.query_options();
  qo.embeddings = text.embeddings.get();
  TextReport report;
  in->queries = together([&] { return in->shards->make_query_set(text.docs, qo, &report); });
  if (cluster.root()) report_text(report, "queries");
  return in;
}

}  // namespace

bool part_per_rank(const QueryFlags& f) {
  if (Cluster::current().size() == 1) return false;
  if (f.indexes.size() > 1) return true;
  return f.indexes.size() == 1 && Collection::exists(f.indexes[0]) &&
         !Collection::holds_one_index(f.indexes[0]);
}

std::unique_ptr<IndexRanks> spread_index(const Loaded& l, const SearcherOptions& options,
                                         const std::string& layout) {
  Cluster& cluster = Cluster::current();
  auto out = std::make_unique<IndexRanks>();
  const SearcherOptions mine = for_rank(cluster, options);
  if (layout == "queries") {
    out->searcher =
        together([&] { return std::make_unique<RankQueries>(cluster, l.index(), mine); });
    out->queries = l.queries;
    return out;
  }
  if (layout != "docs") throw Error("unknown layout '" + layout + "' (expected docs or queries)");
  cluster.step([&] {
    const Part p = part_of(l.index().n_docs(), cluster.rank(), cluster.size());
    out->part = l.index().shard(p.begin, p.end);
  });
  auto shards = together([&] { return std::make_unique<RankShards>(cluster, *out->part, mine); });
  // The parts of one index share its vocabulary: the queries as they are.
  if (cluster.root())
    out->queries = shards->shares_vocabulary() ? l.queries : portable_queries(l.index(), l.queries);
  out->searcher = std::move(shards);
  return out;
}

void search_rank_shards(const QueryFlags& f, std::size_t k, bool with_text,
                        std::unique_ptr<AtomicFile> file) {
  Cluster& cluster = Cluster::current();
  const SearchOptions o = f.options();
  const auto t = Clock::now();
  const std::unique_ptr<RankInput> in = open_shards(f);
  RankShards& shards = *in->shards;
  SearchStats st;
  const SearchResults r = together([&] { return shards.search(in->queries, k, o, &st); });
  const std::vector<std::string> ids = together([&] { return shards.doc_ids(r.indices); });
  const std::vector<std::string> texts =
      with_text ? together([&] { return shards.texts(r.indices); }) : std::vector<std::string>();
  note("search: %s x %s in %d parts, one per rank, %s, %.3f s",
       plural(r.n_queries, "query").c_str(), plural(shards.n_docs(), "document").c_str(),
       cluster.size(), describe(o).c_str(), since(t));
  report_refinement(o, st);
  cluster.step([&] {
    if (cluster.root())
      write_results(
          r, in->queries.ids, [&](std::size_t p, std::size_t) { return ids[p]; },
          [&](std::size_t p, std::size_t) { return texts[p]; }, with_text, o.method,
          std::move(file));
  });
}

void pairwise_rank_shards(const QueryFlags& f, const std::string& output,
                          const std::string& row_ids) {
  Cluster& cluster = Cluster::current();
  const SearchOptions o = f.options();
  const auto t = Clock::now();
  const std::unique_ptr<RankInput> in = open_shards(f);
  RankShards& shards = *in->shards;
  const std::size_t nq = in->queries.size(), n = shards.n_docs();
  std::unique_ptr<NpyWriter> npy;
  cluster.step([&] {
    if (cluster.root()) npy = std::make_unique<NpyWriter>(output, nq, n);
  });
  SearchStats st;
  together([&] {
    shards.pairwise(
        in->queries, o,
        [&](std::size_t, std::size_t rows, const float* d) { npy->append_rows(d, rows); }, &st);
  });
  cluster.step([&] {
    if (!cluster.root()) return;
    if (!row_ids.empty()) {
      AtomicFile ids(row_ids);
      for (const std::string& id : in->queries.ids) ids.write(id + "\n");
      ids.commit();
    }
    npy->commit();
  });
  note("pairwise: %zu x %zu matrix written to %s in %d parts, one per rank (%.3f s)", nq, n,
       output.c_str(), cluster.size(), since(t));
}

}  // namespace lcrwmd::app
