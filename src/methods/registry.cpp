// The methods, registered once (each described in its own folder), and what every front end
// asks of their descriptions: lookups by name, directions, parameters and their checks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/method.h"
#include "methods/method_impl.h"

namespace lcrwmd {

namespace {

std::vector<Method>& registry() {
  static std::vector<Method> all{kBm25Method,   kHybridMethod, kWcdMethod, kRwmdMethod,
                                 kLcRwmdMethod, kWmdMethod,    kActMethod, kIctMethod};
  return all;
}

std::string parameter_names() {
  std::vector<const char*> names;
  for (const Parameter* p : all_parameters()) names.push_back(p->name);
  return names.empty() ? "none" : prose_list(names);
}

}  // namespace

bool MethodInfo::has(Direction d) const {
  switch (d) {
    case Direction::symmetric:
      return symmetric;
    case Direction::document_to_query:
      return document_to_query;
    case Direction::query_to_document:
      return query_to_document;
  }
  return false;
}

Direction MethodInfo::default_direction() const {
  if (symmetric) return Direction::symmetric;
  return query_to_document ? Direction::query_to_document : Direction::document_to_query;
}

bool MethodInfo::runs_on_gpu() const { return impl->gpu != GpuPass::none; }

bool MethodInfo::explains() const { return impl->explain != nullptr; }

const Parameter* MethodInfo::parameter(std::string_view p) const {
  for (const Parameter& q : parameters)
    if (p == q.name) return &q;
  return nullptr;
}

Method::Method(std::string_view name) {
  for (const Method m : registry())
    if (name == m.name()) {
      info_ = &m.info();
      return;
    }
  throw Error("unknown method '" + std::string(name) + "' (expected " + method_names() + ")");
}

const char* to_string(Method m) { return m.name(); }

std::span<const Method> methods() { return registry(); }

Method default_method(QueryKind kind, std::optional<Direction> asked) {
  for (const Method m : registry())
    if (m->default_for == kind)
      return asked && !m->has(*asked) && kind != QueryKind::document
                 ? default_method(QueryKind::document, asked)
                 : m;
  throw Error("no method is the default for this kind of query");  // a registry without one
}

void register_method(const MethodInfo& info) {
  for (const Method m : registry())
    if (std::string_view(m.name()) == info.name)
      throw Error(std::string("a method named '") + info.name + "' is registered already");
  for (const Parameter& p : info.parameters) {
    const Parameter* known = find_parameter(p.name);
    if (known != nullptr && (known->kind != p.kind || known->default_value != p.default_value ||
                             known->min != p.min || known->max != p.max))
      throw Error(std::string(info.name) + "'s parameter " + p.name +
                  " is described otherwise by " + methods_with(p.name));
  }
  if (info.default_for)
    throw Error(std::string(info.name) + ": the defaults are the library's methods");
  registry().push_back(info);
}

std::vector<std::pair<const char*, bool>> method_properties(const MethodInfo& m) {
  return {{"document_to_query", m.document_to_query},
          {"query_to_document", m.query_to_document},
          {"bounded", m.bounded},
          {"runs_on_gpu", m.runs_on_gpu()},
          {"explains", m.explains()}};
}

std::vector<const Parameter*> all_parameters() {
  std::vector<const Parameter*> out;
  for (const Method m : registry())
    for (const Parameter& p : m->parameters)
      if (std::none_of(out.begin(), out.end(),
                       [&](const Parameter* q) { return std::string_view(q->name) == p.name; }))
        out.push_back(&p);
  return out;
}

const Parameter* find_parameter(std::string_view name) {
  for (const Method m : registry())
    if (const Parameter* p = m->parameter(name)) return p;
  return nullptr;
}

std::string methods_with(std::string_view name) {
  return method_names([&](const MethodInfo& m) { return m.parameter(name) != nullptr; });
}

std::string flag(const Parameter& p) {
  std::string f = std::string("--") + p.name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string format_value(const Parameter& p, double value) {
  char s[32];
  std::snprintf(s, sizeof s, p.kind == Parameter::Kind::integer ? "%.0f" : "%.17g", value);
  // The shortest form that reads back as the same double: 0.75, not 0.75000000000000000.
  for (int digits = 1; p.kind == Parameter::Kind::number && digits <= 17; ++digits) {
    std::snprintf(s, sizeof s, "%.*g", digits, value);
    if (std::strtod(s, nullptr) == value) break;
  }
  return s;
}

void check_value(const Parameter& p, double v) {
  const bool integer = p.kind == Parameter::Kind::integer;
  if (std::isfinite(v) && v >= p.min && v <= p.max && (!integer || v == std::floor(v))) return;
  const bool bounded = p.max < std::numeric_limits<double>::infinity();
  const std::string lo = format_value(p, p.min), hi = format_value(p, p.max);
  const std::string range = integer && bounded ? "an integer from " + lo + " to " + hi
                            : integer          ? "an integer at least " + lo
                            : bounded          ? "within [" + lo + ", " + hi + "]"
                                               : "a finite number at least " + lo;
  std::string message = std::string(p.name) + " must be " + range + ", not " +
                        (std::isnan(v) ? std::string("nan") : format_value(p, v));
  if (*p.hint) message += std::string(" (") + p.hint + ")";
  throw OptionError(p.name, message);
}

double parse_value(const Parameter& p, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double v = s.empty() ? std::nan("") : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    throw OptionError(p.name, std::string(p.name) + " must be " +
                                  (p.kind == Parameter::Kind::integer ? "an integer" : "a number") +
                                  ", not '" + s + "'");
  check_value(p, v);
  return v;
}

ParameterValues::ParameterValues(
    std::initializer_list<std::pair<std::string_view, double>> values) {
  for (const auto& [name, value] : values) set(name, value);
}

void ParameterValues::set(std::string_view name, double value) {
  const auto it = std::lower_bound(values_.begin(), values_.end(), name,
                                   [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != values_.end() && it->first == name)
    it->second = value;
  else
    values_.insert(it, {std::string(name), value});
}

std::optional<double> ParameterValues::find(std::string_view name) const {
  const auto it = std::lower_bound(values_.begin(), values_.end(), name,
                                   [](const auto& e, std::string_view n) { return e.first < n; });
  if (it == values_.end() || it->first != name) return std::nullopt;
  return it->second;
}

ParameterValues method_parameters(Method m, const ParameterValues& given) {
  for (const auto& [name, value] : given) {
    const Parameter* p = find_parameter(name);
    if (p == nullptr)
      throw OptionError(name, "unknown parameter '" + name +
                                  "' (the methods' parameters: " + parameter_names() + ")");
    check_value(*p, value);
  }
  ParameterValues out;
  for (const Parameter& p : m->parameters)
    out.set(p.name, given.find(p.name).value_or(p.default_value));
  return out;
}

double parameter_value(Method m, const ParameterValues& values, std::string_view name) {
  const Parameter* p = m->parameter(name);
  if (p == nullptr) throw Error(std::string(m.name()) + " has no parameter " + std::string(name));
  return values.find(name).value_or(p->default_value);
}

void check_parameters(Method m, const ParameterValues& values) { method_parameters(m, values); }

Direction resolve_direction(const MethodInfo& m, std::optional<Direction> asked, bool one_sided) {
  if (one_sided && asked && *asked != Direction::document_to_query)
    throw Error(std::string("one-sided is the direction document-to-query, not ") +
                to_string(*asked) + ": give one of them");
  if (one_sided) return Direction::document_to_query;
  return asked ? *asked : m.default_direction();
}

std::vector<const char*> directions(const MethodInfo& m) {
  std::vector<const char*> names;
  for (const Direction d : kDirections)
    if (m.has(d)) names.push_back(to_string(d));
  return names;
}

std::string prose_list(const std::vector<const char*>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

std::string direction_names(const MethodInfo& m) { return prose_list(directions(m)); }

const char* to_string(Direction d) {
  switch (d) {
    case Direction::symmetric:
      return "symmetric";
    case Direction::document_to_query:
      return "document-to-query";
    case Direction::query_to_document:
      return "query-to-document";
  }
  return "?";
}

Direction parse_direction(std::string_view s) {
  for (const Direction d : kDirections)
    if (s == to_string(d)) return d;
  throw Error("unknown direction '" + std::string(s) +
              "' (expected symmetric, document-to-query or query-to-document)");
}

}  // namespace lcrwmd
