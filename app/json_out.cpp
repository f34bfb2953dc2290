#include "app/json_out.h"

#include <cmath>
#include <cstdint>

namespace lcrwmd::app {
namespace {

using nlohmann::json;

// "flows" (and "flows_left_out" where cut) into `into`.
void add_flows(json& into, const std::vector<WordFlow>& flows, std::size_t top) {
  const std::size_t shown = top == 0 ? flows.size() : std::min(top, flows.size());
  json out = json::array();
  for (std::size_t i = 0; i < shown; ++i)
    out.push_back({{"query_word", flows[i].query_word},
                   {"doc_word", flows[i].doc_word},
                   {"mass", flows[i].mass},
                   {"cost", flows[i].cost}});
  into["flows"] = std::move(out);
  if (shown < flows.size()) into["flows_left_out"] = flows.size() - shown;
}

}  // namespace

std::string to_bytes(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json explanation_json(const Explanation& e, std::size_t top) {
  json j = {{"query", e.query},
            {"doc", e.doc},
            {"method", to_string(e.method)},
            {"direction", to_string(e.direction)},
            {"symmetric", e.direction == Direction::symmetric},
            {"distance", e.distance}};
  add_flows(j, e.flows, top);
  if (e.sides) {
    json d = {{"distance", e.doc_to_query_distance}, {"set_distance", e.doc_to_query_set_distance}};
    add_flows(d, e.doc_to_query, top);
    json q = {{"distance", e.query_to_doc_distance},
              {"set_distance", !e.doc_to_query_set_distance}};
    add_flows(q, e.query_to_doc, top);
    j["doc_to_query"] = std::move(d);
    j["query_to_doc"] = std::move(q);
  }
  return j;
}

json parameter_json(const Parameter& p) {
  const bool integer = p.kind == Parameter::Kind::integer;
  json j = {{"name", p.name},
            {"flag", flag(p)},
            {"type", integer ? "integer" : "number"},
            {"default", p.default_value},
            {"min", p.min},
            {"max", std::isfinite(p.max) ? json(p.max) : json(nullptr)},
            {"help", p.help}};
  if (integer) {
    j["default"] = static_cast<std::int64_t>(p.default_value);
    j["min"] = static_cast<std::int64_t>(p.min);
    if (std::isfinite(p.max)) j["max"] = static_cast<std::int64_t>(p.max);
  }
  return j;
}

json method_json(const MethodInfo& m) {
  json j = {{"name", m.name}, {"summary", m.summary}};
  for (const auto& [name, value] : method_properties(m)) j[name] = value;
  j["directions"] = directions(m);
  j["answers"] = m.answer == Answer::score ? "score" : "distance";
  j["default_for"] = !m.default_for                      ? json(nullptr)
                     : *m.default_for == QueryKind::text ? json("text")
                                                         : json("document");
  j["parameters"] = json::array();
  for (const Parameter& p : m.parameters) j["parameters"].push_back(parameter_json(p));
  return j;
}

}  // namespace lcrwmd::app
