#pragma once
// The lcrwmd subcommands: each registers its flags on the parent app and runs when chosen.
#include <CLI/CLI.hpp>
#include <string>

namespace lcrwmd::app {

// A count flag's check: "must be at least 1" (CLI11's PositiveNumber names a range of doubles).
inline CLI::Validator at_least_one() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          if (std::stoll(s, &used) < 1 && used == s.size())
            return "must be at least 1 (got " + s + ")";
        } catch (const std::exception&) {  // not a number: the conversion says so
        }
        return "";
      },
      "POSITIVE");
}

void add_build(CLI::App& app);
void add_collection_commands(CLI::App& app);  // add, delete, compact
void add_embeddings(CLI::App& app);
void add_search(CLI::App& app);
void add_classify(CLI::App& app);
void add_pairs(CLI::App& app);
void add_cluster(CLI::App& app);
void add_pairwise(CLI::App& app);
void add_info(CLI::App& app);
void add_synth(CLI::App& app);
void add_eval(CLI::App& app);
void add_devices(CLI::App& app);
void add_explain(CLI::App& app);
void add_serve(CLI::App& app);
void add_methods(CLI::App& app);
void add_vectors(CLI::App& app);  // vectors train
void add_learn(CLI::App& app);

}  // namespace lcrwmd::app
