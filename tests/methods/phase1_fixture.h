#pragma once
// Phase 1 for tests that call the method factories (make_lc_rwmd, make_wmd, ...) directly,
// as a CpuSearcher would: the index's vocabulary rounded to a precision, tiles of a given size.
#include <cstddef>

#include "cpu/word_gemm.h"
#include "methods/lc_rwmd/phase1.h"

namespace lcrwmd::test {

struct Phase1Fixture {
  explicit Phase1Fixture(const Index& ix, Precision precision = Precision::f32,
                         std::size_t tile_rows = 64, std::size_t block_words = 0)
      : gemm(ix, resolve_precision(precision)), phase1{gemm, tile_rows, block_words} {}
  cpu::WordGemm gemm;
  Phase1 phase1;
};

}  // namespace lcrwmd::test
