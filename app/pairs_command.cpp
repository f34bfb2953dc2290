// lcrwmd pairs: every pair of an index's documents within a distance (near-duplicates), as
// TSV id_a, id_b, distance, streamed while the documents are searched.
#include <memory>
#include <string>

#include "app/cluster.h"
#include "app/commands.h"
#include "app/output.h"
#include "app/query_input.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/error.h"
#include "lcrwmd/pairs.h"

namespace lcrwmd::app {

void add_pairs(CLI::App& app) {
  auto* c = app.add_subcommand(
      "pairs",
      "Every pair of the index's documents within --max-distance (near-duplicates): TSV id_a, "
      "id_b, distance, each pair once");
  auto f = std::make_shared<QueryFlags>();
  auto output = std::make_shared<std::string>();
  f->add_index(c, false);
  f->add_engine(c);
  f->add_prune(c);
  c->add_option("--max-distance", f->max_distance, "The largest distance of a pair")->required();
  c->add_option("--output", *output, "TSV file (default: stdout)");
  c->callback([f, output] {
    if (Cluster::current().size() > 1) throw Error("pairs runs in one process, not under mpirun");
    set_threads(f->threads);
    const auto t = Clock::now();
    const Index index = load_index(f->indexes.front(), !f->no_verify);
    note("index %s: %zu documents (%.2f s)", f->indexes.front().c_str(), index.n_docs(), since(t));
    const SearchOptions o = f->options();
    const std::unique_ptr<Searcher> searcher = make_searcher(index, f->searcher_options());
    std::unique_ptr<AtomicFile> file;
    if (!output->empty()) file = std::make_unique<AtomicFile>(*output);
    std::size_t count = 0;
    std::string out;
    SearchStats st;
    pairs_within(
        index, *searcher, f->max_distance, o,
        [&](std::span<const Pair> found) {
          out.clear();
          for (const Pair& p : found) {
            out += index.doc_id(p.a);
            out += '\t';
            out += index.doc_id(p.b);
            out += '\t';
            append_distance(out, p.distance);
            out += '\n';
          }
          count += found.size();
          emit(file, out, "the pairs");
        },
        &st);
    finish(file, "the pairs");
    const double all = static_cast<double>(index.n_docs()) *
                       static_cast<double>(index.n_docs() - (index.n_docs() > 0)) / 2;
    note("pairs: %zu of %.0f within %g, %s, %.3f s", count, all,
         static_cast<double>(f->max_distance), describe(o).c_str(), since(t));
    report_refinement(o, st);
  });
}

}  // namespace lcrwmd::app
