// lcrwmd_bench emd and merge (bench_components.h).
#include "bench_components.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include "lcrwmd/emd.h"
#include "lcrwmd/error.h"
#include "lcrwmd/topk.h"

namespace lcrwmd::bench {

void emd_problems(const std::string& path, Report& rep) {
  struct Problem {
    std::vector<double> a, b, cost;
    double reference;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::vector<Problem> problems;
  std::int32_t dims[2];
  while (in.read(reinterpret_cast<char*>(dims), sizeof dims)) {
    Problem p;
    p.a.resize(static_cast<std::size_t>(dims[0]));
    p.b.resize(static_cast<std::size_t>(dims[1]));
    p.cost.resize(p.a.size() * p.b.size());
    for (auto* v : {&p.a, &p.b, &p.cost})
      in.read(reinterpret_cast<char*>(v->data()), static_cast<std::streamsize>(v->size() * 8));
    in.read(reinterpret_cast<char*>(&p.reference), 8);
    if (!in) throw Error(path + ": truncated problem " + std::to_string(problems.size()));
    problems.push_back(std::move(p));
  }
  double worst = 0, words = 0;
  for (const Problem& p : problems) {
    const double d = emd(p.a, p.b, p.cost);
    worst = std::max(worst, std::abs(d - p.reference) / std::max(p.reference, 1e-300));
    words += 0.5 * static_cast<double>(p.a.size() + p.b.size());
  }
  double sink = 0;
  const double t = seconds_of([&] {
    for (const Problem& p : problems) sink += emd(p.a, p.b, p.cost);
  });
  const double n = static_cast<double>(problems.size());
  std::printf("%zu problems, %.1f bins per side on average (checksum %.6g)\n", problems.size(),
              words / n, sink);
  rep.add("emd per problem, one thread (us)", 1e6 * t / n, "us");
  rep.add("max relative difference to the reference (x 1e-9)", 1e9 * worst, "");
}

void merge_cost(std::size_t reps, Report& rep) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.0f, 10.0f);
  const std::size_t queries = 1000;
  for (std::size_t shards : {2, 4, 16, 64})
    for (std::size_t k : {10, 100}) {
      std::vector<std::vector<std::vector<Neighbor>>> parts(shards);
      for (std::size_t s = 0; s < shards; ++s) {
        parts[s].resize(queries);
        for (auto& row : parts[s]) {
          for (std::size_t t = 0; t < k; ++t)
            row.push_back({u(rng), static_cast<std::int64_t>(s * 1000000 + t)});
          std::sort(row.begin(), row.end());
        }
      }
      std::vector<double> t;
      for (std::size_t r = 0; r < reps; ++r)
        t.push_back(seconds_of([&] { merge_topk(parts, queries, k); }));
      rep.add("merge_topk, " + std::to_string(shards) + " shards, k = " + std::to_string(k) +
                  ": per query (us)",
              1e6 * median(t) / queries, "us");
    }
}

}  // namespace lcrwmd::bench
