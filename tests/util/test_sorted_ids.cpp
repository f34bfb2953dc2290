// Ascending id lists: holds() against std::lower_bound from the list's start.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "util/sorted_ids.h"

namespace lcrwmd {
namespace {

TEST(SortedIds, HoldsFindsWhatLowerBoundFindsFromAnyStartNotPast) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 3000; ++trial) {
    // Lists of every shape a search meets: empty, one id, dense runs, sparse, long.
    const std::size_t size =
        std::uniform_int_distribution<std::size_t>(0, trial % 7 == 0 ? 3 : 600)(rng);
    const std::uint32_t spread = std::uniform_int_distribution<std::uint32_t>(1, 40)(rng);
    std::vector<std::uint32_t> list;
    std::uint32_t id = std::uniform_int_distribution<std::uint32_t>(0, 5)(rng);
    for (std::size_t i = 0; i < size; ++i) {
      list.push_back(id);
      id += std::uniform_int_distribution<std::uint32_t>(1, spread)(rng);
    }
    // Ids asked in ascending order (repeats too), past both ends of the list.
    std::vector<std::uint32_t> asked(std::uniform_int_distribution<std::size_t>(0, 80)(rng));
    for (std::uint32_t& d : asked) d = std::uniform_int_distribution<std::uint32_t>(0, id + 3)(rng);
    std::sort(asked.begin(), asked.end());
    std::size_t at = 0;
    for (const std::uint32_t d : asked) {
      const auto expected =
          static_cast<std::size_t>(std::lower_bound(list.begin(), list.end(), d) - list.begin());
      // From where the last call left it, or from any start not past the answer.
      std::size_t from =
          trial % 2 == 0 ? at : std::uniform_int_distribution<std::size_t>(at, expected)(rng);
      const bool held = holds(list, from, d);
      ASSERT_EQ(from, expected) << "trial " << trial << ", id " << d;
      ASSERT_EQ(held, expected < list.size() && list[expected] == d);
      at = from;
    }
  }
}

}  // namespace
}  // namespace lcrwmd
