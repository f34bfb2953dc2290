// lcrwmd_bench precision: CPU phase 1 in each precision, side by side in one run.
#include "bench_precision.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "phase_floor.h"

namespace lcrwmd::bench {
namespace {

const char* mode(bool symmetric) { return symmetric ? "symmetric" : "one-sided"; }

struct Candidate {
  Precision precision;
  std::unique_ptr<CpuSearcher> searcher;
};

}  // namespace

void precision_benchmarks(const Index& ix, const QuerySet& qs, const PrecisionRun& run,
                          Report& rep) {
  std::vector<Candidate> cands;
  for (Precision p : {Precision::f32, Precision::bf16, Precision::int8}) {
    try {
      CpuOptions o;
      o.precision = p;
      cands.push_back({p, std::make_unique<CpuSearcher>(ix, o)});
      std::printf("phase 1 %s\n", describe_precision(p).c_str());
    } catch (const Error& e) {
      std::printf("(%s)\n", e.what());
    }
  }
  std::printf("auto: %s\n", describe_precision(Precision::automatic).c_str());
  // Single queries: the bare SGEMM, then each precision one-sided and symmetric, query by query
  // (after a warm-up round: page cache, huge pages, each searcher's first phase 1).
  std::vector<double> gemm;
  if (run.single) {
    std::vector<std::vector<double>> t(cands.size() * 2), ratio(cands.size() * 2), to_floor(2);
    std::vector<double> pairs(cands.size(), 0), recomputed(cands.size(), 0);
    // The floor (phase_floor.h): the bare int8 GEMM and one read of the documents' words.
    std::vector<double> gemm8, stream, floor;
    for (std::size_t r = 0; r < run.reps + 1; ++r) {
      const QuerySet q = slice(qs, r % qs.size(), 1);
      const double g = bare_sgemm(ix, q.length(0));
      const double g8 = bare_int8_gemm(ix, q.length(0)), pass = stream_documents(ix);
      if (r > 0) gemm8.push_back(g8), stream.push_back(pass), floor.push_back(g8 + pass);
      for (std::size_t c = 0; c < cands.size(); ++c)
        for (int sym = 0; sym < 2; ++sym) {
          SearchStats st;
          const double s = seconds_of([&] { cands[c].searcher->search(q, 10, lc(sym, 1), &st); });
          if (r == 0) continue;
          t[2 * c + sym].push_back(s);
          ratio[2 * c + sym].push_back(s / g);
          if (cands[c].precision == Precision::int8) to_floor[sym].push_back(s / floor.back());
          if (!sym) pairs[c] += static_cast<double>(st.word_pairs);
          if (!sym) recomputed[c] += static_cast<double>(st.recomputed);
        }
      if (r > 0) gemm.push_back(g);
    }
    rep.add("single query: bare OpenBLAS SGEMM of phase 1 (ms)", 1e3 * median(gemm), "ms");
    rep.figure("single_sgemm_ms", 1e3 * median(gemm));
    rep.add("single query: bare oneDNN int8 GEMM of phase 1 (ms)", 1e3 * median(gemm8), "ms");
    rep.add("single query: one read of every document's words (ms)", 1e3 * median(stream), "ms");
    rep.add("single query: floor, the two added (ms)", 1e3 * median(floor), "ms");
    rep.figure("single_floor_ms", 1e3 * median(floor));
    for (int sym = 0; sym < 2; ++sym)
      if (!to_floor[sym].empty())
        rep.add(std::string("single query, int8, ") + mode(sym) + " / floor", median(to_floor[sym]),
                "x");
    for (std::size_t c = 0; c < cands.size(); ++c) {
      const std::string p = to_string(cands[c].precision);
      for (int sym = 0; sym < 2; ++sym) {
        rep.add("single query, " + p + ", " + mode(sym) + " top-10 (ms)",
                1e3 * median(t[2 * c + sym]), "ms");
        rep.add("single query, " + p + ", " + mode(sym) + " / bare SGEMM",
                median(ratio[2 * c + sym]), "x");
        rep.figure("single_" + p + "_" + (sym ? "symmetric" : "one_sided") + "_ms",
                   1e3 * median(t[2 * c + sym]));
      }
      rep.add("single query, " + p + ": recomputed per (word, query)", recomputed[c] / pairs[c],
              "");
    }
  }
  // Batches: per query, each precision, the best of two runs.
  if (gemm.empty())
    for (std::size_t r = 0; r < 3; ++r) gemm.push_back(bare_sgemm(ix, qs.length(r % qs.size())));
  for (std::size_t b : run.batches) {
    const QuerySet q = slice(qs, 0, b);
    for (std::size_t c = 0; c < cands.size(); ++c)
      for (int sym = 0; sym < 2; ++sym) {
        SearchStats st;
        double best = 1e300;
        for (int r = 0; r < 2; ++r)
          best = std::min(best,
                          seconds_of([&] { cands[c].searcher->search(q, 10, lc(sym, b), &st); }));
        const std::string name = "batch of " + std::to_string(q.size()) + ", " +
                                 to_string(cands[c].precision) + ", " + mode(sym);
        const double per_query = best / static_cast<double>(q.size());
        rep.add(name + ": per query (ms)", 1e3 * per_query, "ms");
        rep.add(name + ": per query / single-query bare SGEMM", per_query / median(gemm), "x");
        if (!sym)
          rep.add(name + ": recomputed per (word, query)",
                  static_cast<double>(st.recomputed) / static_cast<double>(st.word_pairs), "");
      }
  }
  // Bulk: the first `bulk` queries with the defaults (auto precision, the planner's batches)
  // against f32 in batches of 64; the results must be the same. Each timed run comes after an
  // untimed one over its first few batches: a process's scratch memory is touched once, then
  // pooled (util/large_array.h), and the first touch of its ~2 GB took 0.6 to 6.2 s of system
  // time on these VMs, whose host backs guest memory lazily; whichever run came first paid it.
  if (run.bulk) {
    const QuerySet q = slice(qs, 0, run.bulk);
    const QuerySet warm = slice(qs, 0, std::min<std::size_t>(run.bulk, 512));
    CpuSearcher defaults(ix);
    for (int sym = 0; sym < 2; ++sym) {
      SearchResults a, b;
      SearchStats st;
      defaults.search(warm, 10, lc(sym, 0));
      const double fast = seconds_of([&] { a = defaults.search(q, 10, lc(sym, 0), &st); });
      cands[0].searcher->search(warm, 10, lc(sym, 64));
      const double slow = seconds_of([&] { b = cands[0].searcher->search(q, 10, lc(sym, 64)); });
      if (a.distances != b.distances || a.indices != b.indices)
        throw Error("bulk search: the defaults and f32 in batches of 64 disagree");
      const std::string name = "bulk " + std::to_string(q.size()) + " queries, " + mode(sym);
      rep.add(name + ", defaults (" + std::string(to_string(st.precision)) + ", " +
                  std::to_string(st.batches) + " batches) (s)",
              fast, "s");
      rep.add(name + ", f32, batches of 64 (s)", slow, "s");
      rep.add(name + ": f32 batch 64 / defaults", slow / fast, "x");
      rep.figure(std::string("bulk_") + (sym ? "symmetric" : "one_sided") + "_speedup",
                 slow / fast);
    }
  }
}

}  // namespace lcrwmd::bench
