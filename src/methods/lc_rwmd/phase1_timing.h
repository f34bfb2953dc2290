#pragma once
// Which precision phase 1 runs fastest at on this CPU, measured rather than assumed: the
// ranking depends on more than the instruction sets (on an AMX Xeon oneDNN's int8 tiles beat
// its bf16 ones, on a Zen our VNNI kernel beats both), and every precision gives the same
// results, so the choice is one of speed alone (lcrwmd/precision.h).
#include <span>
#include <vector>

#include "lcrwmd/precision.h"

namespace lcrwmd {

struct Phase1Timing {
  Precision precision;
  double ms;  // one pass over the sample vocabulary, the best of a few
};

// Phase 1's lower bounds as a top-k computes them (the GEMM and the bound of every vocabulary
// word against every query word, or int8's kernel that does both), at each of `precisions`,
// on one thread over a synthetic vocabulary of 300-d vectors: the passes alternate between
// the precisions and each keeps its best, so that a neighbour's load moves them alike.
std::vector<Phase1Timing> time_phase1(std::span<const Precision> precisions);

// The low precisions this CPU has (int8, bf16), timed once per process where it has both
// (about 70 ms on a Zen 5, at the first call), else the one it has with no time: what
// resolve_precision's auto takes the fastest of (f32 where this is empty).
const std::vector<Phase1Timing>& low_precisions();

}  // namespace lcrwmd
