#pragma once
// What the benchmark programs share: timing, medians, the report (table + JSON), query slices.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_of(const std::function<void()>& f) {
  const auto t = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

inline std::size_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::stoul(line.substr(std::string(field).size()));
  return 0;
}

// Rows of the report: printed as a table and collected for JSON; headline figures also under
// fixed keys at the JSON's top level, for scripts that compare runs.
struct Report {
  std::vector<std::pair<std::string, double>> rows;
  std::map<std::string, double> figures;
  void add(const std::string& name, double value, const char* unit) {
    rows.emplace_back(name, value);
    std::printf("  %-58s %14.4f %s\n", name.c_str(), value, unit);
    std::fflush(stdout);
  }
  void figure(const std::string& key, double value) { figures[key] = value; }
  void write_json(const std::string& path, const std::map<std::string, std::string>& meta) const {
    if (path.empty()) return;
    std::ofstream out(path);
    out << "{";
    for (const auto& [k, v] : meta) out << "\"" << k << "\": \"" << v << "\", ";
    for (const auto& [k, v] : figures) out << "\"" << k << "\": " << v << ", ";
    out << "\"results\": {";
    for (std::size_t i = 0; i < rows.size(); ++i)
      out << (i ? ", " : "") << "\"" << rows[i].first << "\": " << rows[i].second;
    out << "}}\n";
  }
};

// The bare SGEMM of phase 1 for one query: (vocabulary x dim) times (dim x query words).
inline double bare_sgemm(const Index& ix, std::size_t words) {
  static std::vector<float> t, c;
  t.assign(words * ix.dim(), 0.5f);
  c.resize(ix.vocab_size() * words);
  return seconds_of([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(ix.vocab_size()),
                static_cast<int>(words), static_cast<int>(ix.dim()), -2.0f, ix.vectors(),
                static_cast<int>(ix.dim()), t.data(), static_cast<int>(ix.dim()), 0.0f, c.data(),
                static_cast<int>(words));
  });
}

// LC-RWMD in batches of `batch` queries.
inline SearchOptions lc(bool symmetric, std::size_t batch) {
  SearchOptions o;
  o.method = Method("lc-rwmd");
  o.direction = symmetric ? Direction::symmetric : Direction::document_to_query;
  o.batch = batch;
  return o;
}

// count queries from begin (fewer at the end of the set).
inline QuerySet slice(const QuerySet& qs, std::size_t begin, std::size_t count) {
  return subset(qs, begin, begin + count);
}

}  // namespace lcrwmd::bench
