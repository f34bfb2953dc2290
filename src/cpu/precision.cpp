// Precision's names and what this CPU runs each as (search.h).
#include <string>

#include "cpu/simd.h"
#include "cpu/word_gemm.h"
#include "lcrwmd/error.h"
#include "lcrwmd/search.h"

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
    // With AMX both GEMMs are cheap and bf16's narrower intervals leave fewer distances to
    // recompute; without, int8's VNNI GEMM runs well ahead of AVX-512 BF16's (BENCHMARKS.md,
    // "Precision").
    const Precision first = cpu::has_amx() ? Precision::bf16 : Precision::int8;
    for (Precision q : {first, first == Precision::bf16 ? Precision::int8 : Precision::bf16})
      if (cpu::missing_instructions(q).empty()) return q;
    return Precision::f32;
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

}  // namespace lcrwmd
