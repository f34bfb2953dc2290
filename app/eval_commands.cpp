// lcrwmd eval knn | overlap | precision: a method's neighbours judged by labels or against a
// reference method, as tables on stdout (or JSON with --json).
#include <algorithm>
#include <memory>

#include "app/cluster.h"
#include "app/commands.h"
#include "app/json_out.h"
#include "app/query_input.h"
#include "app/rank_shard_commands.h"
#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"

namespace lcrwmd::app {
namespace {

struct EvalFlags : QueryFlags {
  std::vector<std::size_t> ks;
  bool json = false;

  void add(CLI::App* c, std::vector<std::size_t> default_ks, const char* k_help) {
    QueryFlags::add(c);
    add_distribute(c, "queries");
    ks = std::move(default_ks);
    c->add_option("--k", ks, k_help)->delimiter(',')->check(at_least_one())->capture_default_str();
    c->add_flag("--json", json, "Print JSON instead of a table");
  }
  std::size_t max_k() const { return *std::max_element(ks.begin(), ks.end()); }
};

// A method's top-k with its timing and work counts.
struct Run {
  SearchResults results;
  SearchStats stats;
  double seconds = 0;
};

// The searcher of an eval: one process's, or under mpirun the ranks' (their results on rank 0).
struct EvalSearcher {
  std::unique_ptr<Searcher> one;      // one process
  std::unique_ptr<IndexRanks> ranks;  // mpirun
  SearcherOptions options;            // this rank's

  EvalSearcher(const Loaded& l, const EvalFlags& f)
      : options(for_rank(Cluster::current(), f.searcher_options())) {
    if (Cluster::current().size() > 1)
      ranks = spread_index(l, f.searcher_options(), f.distribute);
    else
      one = make_searcher(l.index(), options);
  }
  SearchResults search(const Loaded& l, std::size_t k, const SearchOptions& o,
                       SearchStats* st) const {
    if (one) return one->search(l.queries, k, o, st);
    return together([&] { return ranks->searcher->search(ranks->queries, k, o, st); });
  }
};

// Under mpirun every rank takes part; the results are rank 0's.
Run run_search(const Loaded& l, const EvalSearcher& searcher, const SearchOptions& o,
               std::size_t k) {
  if (l.queries.size() == 0) throw Error("evaluation: no queries (all excluded or none given)");
  Run r;
  const auto t = Clock::now();
  r.results = searcher.search(l, k, o, &r.stats);
  r.seconds = since(t);
  note("%s: %zu queries x %zu documents, top %zu, %.3f s (%s)", describe(o).c_str(),
       l.queries.size(), l.index().n_docs(), k, r.seconds,
       describe_backend(searcher.options, r.stats).c_str());
  report_refinement(o, r.stats);
  return r;
}

// The index and queries of an eval subcommand, its searcher, and its method's top max(k).
struct Evaluated {
  std::unique_ptr<Loaded> loaded;  // the searcher holds a reference to its index
  std::unique_ptr<EvalSearcher> searcher;
  SearchOptions options;
  Run run;
};

Evaluated evaluate(const EvalFlags& f) {
  Evaluated e;
  e.loaded = std::make_unique<Loaded>(load_queries(f));
  e.searcher = std::make_unique<EvalSearcher>(*e.loaded, f);
  e.options = f.options();
  e.run = run_search(*e.loaded, *e.searcher, e.options, f.max_k());
  return e;
}

// What every eval's JSON starts with: the method, the sizes, the time and the work counts.
nlohmann::json json_head(const char* eval, const SearchOptions& o, const Loaded& l, const Run& r) {
  return {{"eval", eval},
          {"method", to_string(o.method)},
          {"direction", to_string(o.direction)},
          {"n_queries", l.queries.size()},
          {"excluded_queries", l.excluded},
          {"n_docs", l.index().n_docs()},
          {"seconds", r.seconds},
          {"exact_refinements", r.stats.refined},
          {"pairs", r.stats.distances},
          {"phase1_precision",
           r.stats.precision == Precision::automatic ? "none" : to_string(r.stats.precision)},
          {"phase1_word_pairs", r.stats.word_pairs},
          {"phase1_recomputed", r.stats.recomputed}};
}

// {"k": value, ...}: one value per k.
nlohmann::json per_k(const std::vector<std::size_t>& ks, const std::vector<double>& values) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < ks.size(); ++i) j[std::to_string(ks[i])] = values[i];
  return j;
}

void print(const nlohmann::json& j) { std::printf("%s\n", to_bytes(j).c_str()); }

void add_knn(CLI::App* parent) {
  auto* c = parent->add_subcommand("knn", "kNN classification error of the test queries");
  auto f = std::make_shared<EvalFlags>();
  std::vector<std::size_t> ks(19);
  for (std::size_t k = 0; k < ks.size(); ++k) ks[k] = k + 1;
  f->add(c, ks, "Neighbour counts to vote with (comma-separated)");
  f->add_prune(c);
  c->callback([f] {
    const Evaluated e = evaluate(*f);
    const Loaded& l = *e.loaded;
    const SearchOptions& o = e.options;
    const Run& r = e.run;
    if (!Cluster::current().root()) return;
    const KnnReport rep = knn_error(r.results, l.index(), l.queries, f->ks);
    if (f->json) {
      nlohmann::json j = json_head("knn", o, l, r);
      j["errors"] = per_k(rep.ks, rep.errors);
      j["best_k"] = rep.best_k;
      j["best_error"] = rep.best_error;
      return print(j);
    }
    std::printf("kNN test error, %s, %zu queries, %zu documents (%.2f s)\n", describe(o).c_str(),
                l.queries.size(), l.index().n_docs(), r.seconds);
    std::printf("%6s %10s\n", "k", "error %");
    for (std::size_t i = 0; i < rep.ks.size(); ++i)
      std::printf("%6zu %10.2f%s\n", rep.ks[i], 100 * rep.errors[i],
                  rep.ks[i] == rep.best_k ? "  best" : "");
  });
}

void add_overlap(CLI::App* parent) {
  auto* c = parent->add_subcommand(
      "overlap", "Share of a method's top-k within a reference method's top x% (paper figs. 5, 6)");
  auto f = std::make_shared<EvalFlags>();
  auto reference = std::make_shared<std::string>("wmd");
  auto percents = std::make_shared<std::vector<double>>(std::vector<double>{1, 2, 5, 10});
  f->add(c, {1, 2, 4, 8, 16, 32}, "Top-k sizes of the method (comma-separated)");
  add_method_flag(
      c, *reference, [](const MethodInfo& m) { return m.symmetric; }, "--reference",
      "The method to compare with (symmetric)");
  c->add_option("--percent", *percents, "Reference top x% of the documents (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  c->callback([f, reference, percents] {
    const Evaluated e = evaluate(*f);
    const Loaded& l = *e.loaded;
    const SearchOptions& o = e.options;
    const Run& r = e.run;
    SearchOptions ro = o;
    ro.method = Method(*reference);
    ro.parameters = method_parameters(ro.method, {});
    ro.direction = Direction::symmetric;
    const std::size_t ref_k = top_percent_count(
        l.index().n_docs(), *std::max_element(percents->begin(), percents->end()));
    const Run ref = run_search(l, *e.searcher, ro, ref_k);
    if (!Cluster::current().root()) return;
    const OverlapReport rep =
        top_k_overlap(r.results, ref.results, l.index().n_docs(), f->ks, *percents);
    const std::size_t np = rep.percents.size();
    if (f->json) {
      nlohmann::json j = json_head("overlap", o, l, r);
      j["reference"] = *reference;
      j["reference_seconds"] = ref.seconds;
      j["percents"] = rep.percents;
      nlohmann::json shares = nlohmann::json::object();
      for (std::size_t k = 0; k < rep.ks.size(); ++k)
        shares[std::to_string(rep.ks[k])] =
            std::vector<double>(rep.shares.begin() + static_cast<std::ptrdiff_t>(k * np),
                                rep.shares.begin() + static_cast<std::ptrdiff_t>((k + 1) * np));
      j["shares"] = std::move(shares);
      return print(j);
    }
    std::printf("share of %s top-k within %s top x%% (%zu queries, %zu documents)\n",
                describe(o).c_str(), reference->c_str(), l.queries.size(), l.index().n_docs());
    std::printf("%6s", "k");
    for (double x : rep.percents) std::printf(" %9g%%", x);
    std::printf("\n");
    for (std::size_t k = 0; k < rep.ks.size(); ++k) {
      std::printf("%6zu", rep.ks[k]);
      for (std::size_t p = 0; p < np; ++p) std::printf(" %10.3f", rep.shares[k * np + p]);
      std::printf("\n");
    }
  });
}

void add_precision(CLI::App* parent) {
  auto* c = parent->add_subcommand(
      "precision", "Precision at top-k per label, geometric mean over label-size groups (fig. 9)");
  auto f = std::make_shared<EvalFlags>();
  f->add(c, {1, 2, 4, 8, 16, 32, 64}, "Top-k sizes (comma-separated)");
  f->add_prune(c);
  c->callback([f] {
    const Evaluated e = evaluate(*f);
    const Loaded& l = *e.loaded;
    const SearchOptions& o = e.options;
    const Run& r = e.run;
    if (!Cluster::current().root()) return;
    const PrecisionReport rep = precision_at_k(r.results, l.index(), l.queries, f->ks);
    if (f->json) {
      nlohmann::json j = json_head("precision", o, l, r);
      j["precision"] = per_k(rep.ks, rep.precision);
      nlohmann::json groups = nlohmann::json::array();
      for (const PrecisionGroup& g : rep.groups)
        groups.push_back({{"min_size", g.min_size},
                          {"max_size", g.max_size},
                          {"labels", g.labels},
                          {"precision", g.precision}});
      j["groups"] = std::move(groups);
      return print(j);
    }
    std::printf("precision at top-k, %s, %zu queries, %zu documents (%.2f s)\n",
                describe(o).c_str(), l.queries.size(), l.index().n_docs(), r.seconds);
    std::printf("%-22s", "labels (docs/label)");
    for (std::size_t k : rep.ks) std::printf(" %7s", ("P@" + std::to_string(k)).c_str());
    std::printf("\n");
    for (const PrecisionGroup& grp : rep.groups) {
      std::printf("%-22s", (std::to_string(grp.labels) + " (" + std::to_string(grp.min_size) + "-" +
                            std::to_string(grp.max_size) + ")")
                               .c_str());
      for (double p : grp.precision) std::printf(" %7.3f", p);
      std::printf("\n");
    }
    std::printf("%-22s", "geometric mean");
    for (double p : rep.precision) std::printf(" %7.3f", p);
    std::printf("\n");
  });
}

}  // namespace

void add_eval(CLI::App& app) {
  auto* c = app.add_subcommand("eval", "Quality of a method's neighbours on labelled data");
  c->require_subcommand(1);
  add_knn(c);
  add_overlap(c);
  add_precision(c);
}

}  // namespace lcrwmd::app
