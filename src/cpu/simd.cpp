// Chooses the kernels of simd.h by cpuid, once.
#include "cpu/simd.h"

#include <cstdlib>
#include <string>

#include "lcrwmd/error.h"
#include "lcrwmd/search.h"

namespace lcrwmd::cpu {

// One table per level this build compiled (CMake defines LCRWMD_SIMD_X86 on x86-64).
namespace scalar {
const Kernels& table();
}
#if defined(LCRWMD_SIMD_X86)
namespace avx2 {
const Kernels& table();
}
namespace avx512 {
const Kernels& table();
}
#endif

namespace {

bool cpu_has(Simd level) {
#if defined(LCRWMD_SIMD_X86)
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XGETBV).
  switch (level) {
    case Simd::scalar:
      return true;
    case Simd::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Simd::avx512:  // x86-64-v4, the level simd_kernels.cpp is compiled for
      return cpu_has(Simd::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
  }
#endif
  return level == Simd::scalar;
}

Simd cap_from_environment() {
  const char* cap = std::getenv("LCRWMD_SIMD");
  if (!cap || !*cap) return Simd::avx512;
  for (Simd s : {Simd::scalar, Simd::avx2, Simd::avx512})
    if (cap == std::string(simd_name(s))) return s;
  throw Error(std::string("LCRWMD_SIMD=") + cap + ": expected scalar, avx2 or avx512");
}

const Kernels& choose() {
  const Simd cap = cap_from_environment();
  for (Simd s : {Simd::avx512, Simd::avx2})
    if (s <= cap)
      if (const Kernels* k = kernels_for(s)) return *k;
  return scalar::table();
}

}  // namespace

const char* simd_name(Simd level) {
  switch (level) {
    case Simd::avx2:
      return "avx2";
    case Simd::avx512:
      return "avx512";
    case Simd::scalar:
      break;
  }
  return "scalar";
}

const Kernels* kernels_for(Simd level) {
  if (!cpu_has(level)) return nullptr;
#if defined(LCRWMD_SIMD_X86)
  if (level == Simd::avx2) return &avx2::table();
  if (level == Simd::avx512) return &avx512::table();
#endif
  return &scalar::table();
}

const Kernels& kernels() {
  static const Kernels& k = choose();
  return k;
}

}  // namespace lcrwmd::cpu

namespace lcrwmd {

const char* cpu_simd_level() { return cpu::simd_name(cpu::kernels().level); }

}  // namespace lcrwmd
