#pragma once
// ACT-k's k, as a search asks for it and as the batch and per-pair computations take it.
#include <algorithm>
#include <cstddef>

#include "lcrwmd/search.h"

namespace lcrwmd {

// k for ICT: every capped step a transfer can take.
inline constexpr std::size_t kIctSteps = static_cast<std::size_t>(-1);
// How many of a target side's n words one word's transfer reaches: its `steps` capped ones and
// the one taking the rest (ICT: all of them).
inline std::size_t reachable_words(std::size_t steps, std::size_t n) {
  return steps == kIctSteps ? n : std::min(n, steps + 1);
}
// The k a search asks of ACT (ICT: kIctSteps).
inline std::size_t act_steps(const SearchOptions& o) {
  return o.method == Method::ict ? kIctSteps : o.act_steps;
}

}  // namespace lcrwmd
