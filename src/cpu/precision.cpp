// Precision's names and what this CPU runs each as (search.h).
#include <algorithm>
#include <cstdio>
#include <string>

#include "cpu/simd.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/error.h"
#include "lcrwmd/search.h"
#include "methods/lc_rwmd/phase1_timing.h"

namespace lcrwmd {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::automatic:
      return "auto";
    case Precision::f32:
      return "f32";
    case Precision::bf16:
      return "bf16";
    case Precision::int8:
      return "int8";
  }
  return "?";
}

Precision parse_precision(std::string_view s) {
  for (Precision p : {Precision::automatic, Precision::f32, Precision::bf16, Precision::int8})
    if (s == to_string(p)) return p;
  throw Error("unknown precision '" + std::string(s) + "' (expected auto, f32, bf16 or int8)");
}

Precision resolve_precision(Precision p) {
  if (p == Precision::automatic) {
    // The faster of bf16 and int8 as measured here (both fill the GEMM's lanes twice or four
    // times as densely as f32, and which wins depends on the CPU: BENCHMARKS.md, "Precision");
    // f32 where the CPU has neither.
    const auto& timed = low_precisions();
    if (timed.empty()) return Precision::f32;
    return std::min_element(
               timed.begin(), timed.end(),
               [](const Phase1Timing& a, const Phase1Timing& b) { return a.ms < b.ms; })
        ->precision;
  }
  const std::string missing = cpu::missing_instructions(p);
  if (!missing.empty())
    throw Error(std::string("precision ") + to_string(p) + " needs " + missing +
                ", which this CPU lacks (auto takes the fastest it has)");
  return p;
}

std::string describe_precision(Precision p) {
  const Precision resolved = resolve_precision(p);
  std::string how = std::string(to_string(resolved)) + " (" + cpu::gemm_implementation(resolved);
  // Named for vectors of a word's usual size (beyond 65,536 dimensions oneDNN bounds them).
  if (cpu::int8_direct_bounds(resolved, 300))
    how += std::string("; LC-RWMD's bounds: lcrwmd's ") + cpu::kernels().int8_bound_strip_isa +
           " kernel";
  return how + ")";
}

std::string timed_precisions() {
  const std::vector<Phase1Timing>& timed = low_precisions();
  std::string out;
  if (timed.size() < 2) return out;
  for (const Phase1Timing& t : timed) {
    char one[64];
    std::snprintf(one, sizeof one, "%s%s %.3f ms", out.empty() ? "" : ", ", to_string(t.precision),
                  t.ms);
    out += one;
  }
  return out;
}

}  // namespace lcrwmd
