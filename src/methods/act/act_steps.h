#pragma once
// ACT-k's k, as a search asks for it and as the batch and per-pair computations take it. ICT is
// ACT with every step: its description has no act_steps, and its searches read kIctSteps here.
#include <algorithm>
#include <cstddef>

#include "lcrwmd/search.h"

namespace lcrwmd {

// k for ICT: every capped step a transfer can take.
inline constexpr std::size_t kIctSteps = static_cast<std::size_t>(-1);
// ACT's k at most: a step per word of a document, and no document holds a million distinct
// words (past it every transfer is ICT's anyway).
inline constexpr std::size_t kMaxActSteps = 1'000'000;
// How many of a target side's n words one word's transfer reaches: its `steps` capped ones and
// the one taking the rest (ICT: all of them).
inline std::size_t reachable_words(std::size_t steps, std::size_t n) {
  return steps == kIctSteps ? n : std::min(n, steps + 1);
}
// The k a search asks of ACT or ICT (kIctSteps); an Error for any other method.
std::size_t act_steps(const SearchOptions& o);

}  // namespace lcrwmd
