#pragma once
// The precision of the CPU's phase-1 GEMM: an option of the CPU backend (lcrwmd/cpu.h) that
// each search's stats report (lcrwmd/search.h).
#include <string>
#include <string_view>

namespace lcrwmd {

// How the CPU computes phase 1's word distances (every vocabulary word against a batch's query
// words). Every precision gives the same results, bit for bit: the GEMM only has to tell which
// query words can be a vocabulary word's nearest, since a rigorous bound on each low-precision
// distance's error rules the others out; the distances that count are recomputed from the
// vectors in float, in a fixed order. A lower precision is a faster GEMM, not a different answer.
enum class Precision {
  automatic,  // the fastest this CPU has: bf16 or int8, whichever phase 1 runs faster at
              // here (timed once per process, about 70 ms), else f32
  f32,        // oneDNN's f32 matmul
  bf16,       // oneDNN: AMX-BF16 or AVX-512 BF16
  int8,       // oneDNN: AMX-INT8, AVX-512 VNNI or AVX-VNNI; a scale per vector (LC-RWMD's
              // bounds on AVX-512 VNNI: our own kernel, the same bits)
};
const char* to_string(Precision p);
Precision parse_precision(std::string_view s);  // "auto" | "f32" | "bf16" | "int8"
// What `p` runs as on this CPU (automatic: the fastest it has); an Error naming the missing
// instruction set where the CPU cannot run it.
Precision resolve_precision(Precision p);
// How this CPU runs `p` (after resolve_precision), e.g. "int8 (brg:avx512_core_amx_int8)".
std::string describe_precision(Precision p);
// What auto's choice rests on: phase 1 timed here at each low precision, e.g. "int8 0.071 ms,
// bf16 0.247 ms"; "" where the CPU has one of them or none (no choice to time).
std::string timed_precisions();

}  // namespace lcrwmd
