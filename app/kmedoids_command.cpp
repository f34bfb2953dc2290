// lcrwmd cluster: k-medoids over an index's documents (lcrwmd/kmedoids.h), as TSV id, cluster,
// medoid id, distance; the objective of each iteration on stderr.
#include <memory>
#include <string>

#include "app/cluster.h"
#include "app/commands.h"
#include "app/output.h"
#include "app/query_input.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/error.h"
#include "lcrwmd/kmedoids.h"

namespace lcrwmd::app {

void add_cluster(CLI::App& app) {
  auto* c = app.add_subcommand(
      "cluster", "k-medoids over the index's documents: TSV id, cluster, medoid id, distance");
  auto f = std::make_shared<QueryFlags>();
  auto co = std::make_shared<ClusterOptions>();
  auto output = std::make_shared<std::string>();
  f->add_index(c, false);
  f->add_engine(c);
  c->add_option("--k", co->k, "Clusters")->check(at_least_one())->capture_default_str();
  c->add_option("--seed", co->seed, "Seed of the first medoids and the samples")
      ->capture_default_str();
  c->add_option("--iterations", co->max_iterations, "Assignments at most")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--candidates", co->candidates,
                "Members tried as each cluster's medoid per iteration")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--members", co->members,
                "Members each candidate's total distance is measured on, per cluster")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--output", *output, "TSV file (default: stdout)");
  c->callback([f, co, output] {
    if (Cluster::current().size() > 1) throw Error("cluster runs in one process, not under mpirun");
    set_threads(f->threads);
    const auto t = Clock::now();
    const Index index = load_index(f->indexes.front(), !f->no_verify);
    note("index %s: %zu documents (%.2f s)", f->indexes.front().c_str(), index.n_docs(), since(t));
    ClusterOptions o = *co;
    o.search = f->options();
    o.search.progress = nullptr;
    o.progress = [&](std::size_t it, double objective) {
      note("  iteration %zu: objective %.6g (%.2f s)", it + 1, objective, since(t));
    };
    const std::unique_ptr<Searcher> searcher = make_searcher(index, f->searcher_options());
    std::unique_ptr<AtomicFile> file;
    if (!output->empty()) file = std::make_unique<AtomicFile>(*output);
    const Clustering r = k_medoids(index, *searcher, o);
    std::string out;
    for (std::size_t i = 0; i < index.n_docs(); ++i) {
      out += index.doc_id(i);
      out += '\t' + std::to_string(r.assignment[i]) + '\t';
      out += index.doc_id(r.medoids[r.assignment[i]]);
      out += '\t';
      append_distance(out, r.distance[i]);
      out += '\n';
    }
    emit(file, out, "the clusters");
    finish(file, "the clusters");
    note(
        "cluster: %zu documents in %zu clusters, %s, objective %.6g after %zu assignments "
        "(%.3f s)",
        index.n_docs(), r.medoids.size(), describe(o.search).c_str(), r.objective.back(),
        r.objective.size(), since(t));
  });
}

}  // namespace lcrwmd::app
