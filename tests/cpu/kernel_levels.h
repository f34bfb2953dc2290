#pragma once
// The kernels' tests share these: lengths around the vector widths, random data, the SIMD levels
// this machine runs beside the scalar one.
#include <cstddef>
#include <random>
#include <vector>

#include "cpu/simd.h"

namespace lcrwmd::test {

using cpu::Kernels;
using cpu::Simd;

inline const std::size_t kLengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 107, 300};

inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

inline std::vector<const Kernels*> wider_levels() {
  std::vector<const Kernels*> out;
  for (Simd s : {Simd::avx2, Simd::avx512})
    if (const Kernels* k = cpu::kernels_for(s)) out.push_back(k);
  return out;
}

inline const Kernels& scalar() { return *cpu::kernels_for(Simd::scalar); }

}  // namespace lcrwmd::test
