#pragma once
// The floor of one query's LC-RWMD on the CPU, the two passes no design of it avoids: phase 1's
// products of every vocabulary word with the query's words (the bare int8 GEMM, oneDNN's, on
// int8 operands padded as phase 1 pads them), and phase 2's one read of every document's words
// (the index's word numbers and weights streamed once, summed so that nothing is skipped).
#include <cstddef>

#include "lcrwmd/index.h"

namespace lcrwmd::bench {

// Seconds of one s8 x s8 -> s32 matmul of (query words x padded dim) by (padded dim x
// vocabulary), the primitive made beforehand.
double bare_int8_gemm(const Index& ix, std::size_t words);

// Seconds of one parallel pass over the index's word numbers and weights.
double stream_documents(const Index& ix);

}  // namespace lcrwmd::bench
