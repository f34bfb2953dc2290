// lcrwmd classify: each query's label by the vote of its k nearest labelled documents, with the
// votes and the neighbours (TSV, or JSON).
#include <memory>
#include <string>

#include "app/cluster.h"
#include "app/commands.h"
#include "app/json_out.h"
#include "app/output.h"
#include "app/query_input.h"
#include "app/top_k.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/classify.h"
#include "lcrwmd/error.h"

namespace lcrwmd::app {
namespace {

// One line per query: id, label, votes ("label:count,..."), neighbours ("id:distance,...").
std::string tsv_line(const std::string& id, const Classification& c, const SearchResults& r,
                     std::size_t q, const SegmentSet& docs) {
  std::string line = id + '\t' + c.label + '\t';
  for (std::size_t v = 0; v < c.votes.size(); ++v) {
    if (v) line += ',';
    line += c.votes[v].first + ':' + std::to_string(c.votes[v].second);
  }
  line += '\t';
  for (std::size_t j = 0; j < c.voters; ++j) {
    const std::size_t at = q * r.k + j;
    if (j) line += ',';
    line += docs.doc_id(static_cast<std::size_t>(r.indices[at]));
    line += ':';
    append_distance(line, r.distances[at]);
  }
  return line + '\n';
}

nlohmann::json json_of(const std::string& id, const Classification& c, const SearchResults& r,
                       std::size_t q, const SegmentSet& docs) {
  nlohmann::json votes = nlohmann::json::array(), neighbours = nlohmann::json::array();
  for (const auto& [label, count] : c.votes) votes.push_back({{"label", label}, {"votes", count}});
  for (std::size_t j = 0; j < c.voters; ++j) {
    const std::size_t at = q * r.k + j;
    const auto doc = static_cast<std::size_t>(r.indices[at]);
    neighbours.push_back(
        {{"id", docs.doc_id(doc)}, {"label", docs.label(doc)}, {"distance", r.distances[at]}});
  }
  return {{"id", id}, {"label", c.label}, {"votes", votes}, {"neighbours", neighbours}};
}

}  // namespace

void add_classify(CLI::App& app) {
  auto* c = app.add_subcommand(
      "classify",
      "Label each query by the vote of its k nearest labelled documents (ties: as eval knn)");
  auto f = std::make_shared<QueryFlags>();
  auto k = std::make_shared<std::size_t>(5);
  auto output = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  f->add(c, true);
  f->add_prune(c);
  f->add_distribute(c, "docs");
  c->add_option("--k", *k, "Neighbours that vote")->check(at_least_one())->capture_default_str();
  c->add_option("--output", *output,
                "TSV query_id, label, votes (label:count,...), neighbours (id:distance,...); "
                "default: stdout");
  c->add_flag("--json", *json, "Write JSON instead: one object per query, in a list");
  c->callback([f, k, output, json] {
    Cluster& cluster = Cluster::current();
    std::unique_ptr<AtomicFile> file;
    cluster.step([&] {
      if (cluster.root() && !output->empty()) file = std::make_unique<AtomicFile>(*output);
    });
    Loaded l = load_queries(*f);
    const SegmentSet& docs = l.documents();
    SearchStats st;
    const SearchResults r = top_k(*f, l, *k, st);
    cluster.step([&] {
      if (!cluster.root()) return;
      const std::vector<Classification> cs = classify(
          r, *k, [&](std::size_t d) { return docs.label(d); },
          [&](std::size_t d) { return std::string(docs.doc_id(d)); });
      std::string out;
      if (*json) {
        nlohmann::json all = nlohmann::json::array();
        for (std::size_t q = 0; q < cs.size(); ++q)
          all.push_back(json_of(l.queries.ids[q], cs[q], r, q, docs));
        out = to_bytes(all) + '\n';
      } else {
        for (std::size_t q = 0; q < cs.size(); ++q)
          out += tsv_line(l.queries.ids[q], cs[q], r, q, docs);
      }
      emit(file, out, "the labels");
      finish(file, "the labels");
    });
  });
}

}  // namespace lcrwmd::app
