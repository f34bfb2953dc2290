#pragma once
// The lcrwmd subcommands: each registers its flags on the parent app and runs when chosen.
#include <CLI/CLI.hpp>

namespace lcrwmd::app {

void add_build(CLI::App& app);
void add_search(CLI::App& app);
void add_pairwise(CLI::App& app);
void add_info(CLI::App& app);
void add_synth(CLI::App& app);
void add_eval(CLI::App& app);
void add_devices(CLI::App& app);
void add_explain(CLI::App& app);
void add_serve(CLI::App& app);

}  // namespace lcrwmd::app
