// blas_description (lcrwmd/cpu.h): what OpenBLAS chose for this CPU, and a note where it chose
// kernels below what the CPU runs.
#include <cblas.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "lcrwmd/cpu.h"

namespace lcrwmd {
namespace {

// OpenBLAS's kernels for CPUs without AVX2: an OpenBLAS that does not recognise a newer CPU
// (a model newer than the library, or a virtual machine's generic name) falls back to them.
constexpr std::array<std::string_view, 9> kBeforeAvx2 = {"Prescott",   "Core2",     "Penryn",
                                                         "Dunnington", "Nehalem",   "Sandybridge",
                                                         "Atom",       "Barcelona", "Opteron"};

}  // namespace

std::string blas_description() {
  // The configuration's first two words: the library and its version.
  const std::string config = openblas_get_config(), core = openblas_get_corename();
  const std::size_t name_end = config.find(' ');
  std::string d = config.substr(0, name_end == std::string::npos ? std::string::npos
                                                                 : config.find(' ', name_end + 1)) +
                  ", " + core + " kernels";
  const std::string_view level = cpu_simd_level();
  const bool old_kernels = std::any_of(kBeforeAvx2.begin(), kBeforeAvx2.end(), [&](auto name) {
    return core.size() == name.size() && strncasecmp(core.c_str(), name.data(), name.size()) == 0;
  });
  if (old_kernels && (level == "avx2" || level == "avx512"))
    d += std::string(" (this CPU runs ") + std::string(level) +
         ": OPENBLAS_CORETYPE=" + (level == "avx512" ? "SkylakeX" : "Haswell") +
         " selects OpenBLAS's faster kernels)";
  return d;
}

}  // namespace lcrwmd
