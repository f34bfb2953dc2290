// lcrwmd: document similarity with the Word Mover's Distance and its relaxations.
#include <cstdio>
#include <exception>

#include "app/cluster.h"
#include "app/commands.h"
#include "lcrwmd/error.h"

namespace {

// The command line; `orderly` is cleared where a failure left the other ranks of an mpirun
// job unaware (outside Cluster::step), so that main ends them.
int run(int argc, char** argv, bool& orderly) {
  // The subcommands list themselves under "SUBCOMMANDS", each with its own description.
  CLI::App app{
      "lcrwmd: nearest documents by Word Mover's Distance (WMD) and its relaxations (WCD, RWMD,\n"
      "LC-RWMD, ACT, ICT)"};
  app.require_subcommand(1);
  lcrwmd::app::add_build(app);
  lcrwmd::app::add_collection_commands(app);
  lcrwmd::app::add_embeddings(app);
  lcrwmd::app::add_vectors(app);
  lcrwmd::app::add_learn(app);
  lcrwmd::app::add_search(app);
  lcrwmd::app::add_pairwise(app);
  lcrwmd::app::add_classify(app);
  lcrwmd::app::add_pairs(app);
  lcrwmd::app::add_cluster(app);
  lcrwmd::app::add_eval(app);
  lcrwmd::app::add_info(app);
  lcrwmd::app::add_synth(app);
  lcrwmd::app::add_devices(app);
  lcrwmd::app::add_explain(app);
  lcrwmd::app::add_serve(app);
  lcrwmd::app::add_methods(app);
  orderly = false;
  try {
    app.parse(argc, argv);
    orderly = true;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const lcrwmd::app::ClusterFailure&) {
    orderly = true;  // every rank stops here; rank 0 said why
    return 1;
  } catch (const lcrwmd::Error& e) {
    std::fprintf(stderr, "lcrwmd: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "lcrwmd: error: out of memory (try a smaller --batch or --memory)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lcrwmd: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    lcrwmd::app::Cluster cluster(argc, argv);
    bool orderly = true;
    const int code = run(argc, argv, orderly);
    if (code != 0 && !orderly) cluster.abort(code);
    return code;
  } catch (const lcrwmd::Error& e) {  // joining the cluster failed
    std::fprintf(stderr, "lcrwmd: error: %s\n", e.what());
    return 1;
  }
}
