#pragma once
// lcrwmd_bench postings: an index's own posting lists as its file stores them (bit-packed
// blocks, io/posting_codec.h) beside Stream VByte blocks (Debian's libstreamvbyte, where it is
// installed: scripts/install-deps.sh --results) and beside the plain arrays of older index files:
// bytes a posting, and the time to decode every block of every list.
#include <cstddef>

#include "bench_util.h"

namespace lcrwmd::bench {

void posting_benchmarks(const Index& index, std::size_t reps, Report& rep);

}  // namespace lcrwmd::bench
