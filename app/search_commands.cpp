// lcrwmd search and pairwise: top-k as TSV, the full matrix as .npy; over one index or a
// collection of shards, and under mpirun over ranks.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/cluster.h"
#include "app/commands.h"
#include "app/output.h"
#include "app/query_input.h"
#include "app/rank_shard_commands.h"
#include "app/top_k.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/npy_writer.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/segments.h"

namespace lcrwmd::app {

void write_results(const SearchResults& r, const std::vector<std::string>& query_ids,
                   const Describe& id_of, const Describe& text_of, bool with_text, Method method,
                   std::unique_ptr<AtomicFile> file) {
  const bool scores = method->answer == Answer::score;
  // Written one query at a time: with a large --k the results need not fit in memory twice.
  std::string out;
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    out.clear();
    for (std::size_t j = 0; j < r.k; ++j) {
      const std::size_t p = q * r.k + j;
      const std::int64_t doc = r.indices[p];
      if (doc < 0) continue;
      out += query_ids[q];
      out += '\t';
      out += std::to_string(j + 1);
      out += '\t';
      out += id_of(p, static_cast<std::size_t>(doc));
      out += '\t';
      append_distance(out, scores ? -r.distances[p] : r.distances[p]);
      if (with_text) {  // one line per neighbour: the text's tabs and line breaks as spaces
        std::string text = text_of(p, static_cast<std::size_t>(doc));
        std::replace_if(
            text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; },
            ' ');
        out += '\t';
        out += text;
      }
      out += '\n';
    }
    emit(file, out, "results");
  }
  finish(file, "results");
}

void add_search(CLI::App& app) {
  auto* c = app.add_subcommand("search", "Top-k nearest documents for each query");
  auto f = std::make_shared<QueryFlags>();
  auto k = std::make_shared<std::size_t>(10);
  auto output = std::make_shared<std::string>();
  auto with_text = std::make_shared<bool>(false);
  f->add(c, true);
  c->get_option("--queries")->required(false);
  auto* typed = c->add_option("--query", f->typed,
                              "Typed words as a query, a search box's (may be repeated; its id in "
                              "the results: its words; default method: " +
                                  std::string(default_method(QueryKind::text).name()) + ")")
                    ->excludes("--queries");
  c->add_option("--like", f->like,
                "More like this: a document of the index (its id; may be repeated) as the query, "
                "itself left out of its neighbours (default: the symmetric distance)")
      ->excludes("--queries")
      ->excludes(typed);
  f->add_prune(c);
  f->add_max_distance(c);
  c->add_option("--k", *k, "Neighbours per query (more than the index holds: all)")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--output", *output,
                "TSV query_id, rank, doc_id, distance (bm25 and hybrid: their score, higher "
                "first) (default: stdout)");
  c->add_flag("--with-text", *with_text,
              "A fifth column: each neighbour's text (kept in the index unless built with "
              "--no-text)");
  f->add_distribute(c, "docs");
  c->callback([f, k, output, with_text] {
    Cluster& cluster = Cluster::current();
    std::unique_ptr<AtomicFile> file;
    cluster.step([&] {
      if (cluster.root() && !output->empty()) file = std::make_unique<AtomicFile>(*output);
    });
    if (f->queries.empty() && f->typed.empty() && f->like.empty())
      throw Error("give --queries (documents), --query (typed words) or --like");
    if (part_per_rank(*f)) {
      if (!f->like.empty())
        throw Error(
            "--like: not with a part of the collection per rank under mpirun (give one "
            "index)");
      return search_rank_shards(*f, *k, *with_text, std::move(file));
    }
    Loaded l = load_queries(*f);
    if (*with_text && !l.documents().has_text())
      throw Error("--with-text: an index holds no texts (built with --no-text)");
    SearchStats st;
    const bool like = !f->like.empty();
    SearchResults r = top_k(*f, l, *k + (like ? 1 : 0), st);
    if (like && cluster.root()) r = without_self(r, l.liked, *k);  // root writes the results
    cluster.step([&] {
      if (!cluster.root()) return;
      const SegmentSet& docs = l.documents();
      write_results(
          r, l.queries.ids,
          [&](std::size_t, std::size_t doc) { return std::string(docs.doc_id(doc)); },
          [&](std::size_t, std::size_t doc) { return docs.text(doc); }, *with_text,
          f->options().method, std::move(file));
    });
  });
}

void add_pairwise(CLI::App& app) {
  auto* c = app.add_subcommand("pairwise", "Full query x document distance matrix as .npy");
  auto f = std::make_shared<QueryFlags>();
  auto output = std::make_shared<std::string>();
  auto row_ids = std::make_shared<std::string>();
  f->add(c, true);
  c->add_option("--output", *output, "float32 .npy file, queries x documents")->required();
  c->add_option("--row-ids", *row_ids,
                "Also write the query id of each row, one per line (queries with no known "
                "word have no row)");
  // Under mpirun each rank computes blocks of the queries' rows and sends them to rank 0, which
  // writes them.
  c->callback([f, output, row_ids] {
    Cluster& cluster = Cluster::current();
    if (part_per_rank(*f)) return pairwise_rank_shards(*f, *output, *row_ids);
    Loaded l = load_queries(*f);
    auto t = Clock::now();
    const std::size_t n = l.documents().n_docs();
    const SearchOptions o = f->options();
    const SearcherOptions so = f->searcher_options();
    std::unique_ptr<NpyWriter> npy;
    cluster.step([&] {
      if (cluster.root()) npy = std::make_unique<NpyWriter>(*output, l.queries.size(), n);
    });
    const auto append = [&](std::size_t, std::size_t rows, const float* d) {
      npy->append_rows(d, rows);
    };
    SearchStats st;
    if (cluster.size() > 1) {  // the queries spread: each rank's rows travel to rank 0
      const std::unique_ptr<IndexRanks> ranks = spread_index(l, so, "queries");
      together([&] { ranks->searcher->pairwise(ranks->queries, o, append, &st); });
    } else {
      CollectionSearcher(l.documents(), so).pairwise(l.queries, o, append, &st);
    }
    cluster.step([&] {
      if (!cluster.root()) return;
      if (!row_ids->empty()) {
        AtomicFile ids(*row_ids);
        for (const std::string& id : l.queries.ids) ids.write(id + "\n");
        ids.commit();
      }
      npy->commit();
    });
    note("pairwise: %zu x %zu matrix written to %s (%.3f s, %s)", l.queries.size(), n,
         output->c_str(), since(t), describe_backend(for_rank(cluster, so), st).c_str());
  });
}

}  // namespace lcrwmd::app
