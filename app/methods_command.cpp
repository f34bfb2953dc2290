// lcrwmd methods: every method as the library describes it (lcrwmd/method.h), as a table, JSON
// or the Markdown table docs/methods.md holds (a test keeps the two equal).
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/json_out.h"
#include "lcrwmd/method.h"

namespace lcrwmd::app {
namespace {

const char* yes(bool b) { return b ? "yes" : "-"; }

}  // namespace

void add_methods(CLI::App& app) {
  auto* c = app.add_subcommand("methods", "The distances lcrwmd computes and what each offers");
  auto format = std::make_shared<std::string>("table");
  c->add_option("--format", *format, "table | json | markdown")
      ->check(CLI::IsMember({"table", "json", "markdown"}))
      ->capture_default_str();
  c->callback([format] {
    if (*format == "json") {
      nlohmann::json j = nlohmann::json::array();
      for (const Method m : methods()) j.push_back(method_json(m.info()));
      std::printf("%s\n", to_bytes(j).c_str());
      return;
    }
    const bool md = *format == "markdown";
    const char* row = md ? "| `%s` | %s | %s | %s | %s | %s |\n" : "%-8s %-15s %-7s %-4s %-8s %s\n";
    if (md) {
      std::printf(
          "| method | directions | pruned top-k | GPU | explain | what it computes |\n"
          "|---|---|---|---|---|---|\n");
    } else {
      std::printf(row, "method", "directions", "pruned", "gpu", "explain", "what it computes");
    }
    // sym: symmetric, d->q: document-to-query, q->d: query-to-document (--direction); the
    // default first.
    static const char* const kShort[] = {"sym", "d->q", "q->d"};
    for (const Method method : methods()) {
      const MethodInfo& m = method.info();
      std::string ways;
      for (std::size_t d = 0; d < std::size(kDirections); ++d)
        if (m.has(kDirections[d])) ways += (ways.empty() ? "" : ", ") + std::string(kShort[d]);
      std::printf(row, m.name, ways.c_str(), yes(m.bounded), yes(m.runs_on_gpu()),
                  yes(m.explains()), m.summary);
    }
    // Each parameter once, with the methods that read it.
    if (md)
      std::printf(
          "\n| parameter | flag | methods | default | what it sets |\n|---|---|---|---|---|\n");
    else
      std::printf("\n%-14s %-16s %-15s %-8s %s\n", "parameter", "flag", "methods", "default",
                  "what it sets");
    for (const Parameter* p : all_parameters())
      std::printf(md ? "| `%s` | `%s` | %s | %s | %s |\n" : "%-14s %-16s %-15s %-8s %s\n", p->name,
                  flag(*p).c_str(), methods_with(p->name).c_str(),
                  format_value(*p, p->default_value).c_str(), p->help);
  });
}

}  // namespace lcrwmd::app
