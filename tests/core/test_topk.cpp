#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "lcrwmd/topk.h"

namespace lcrwmd {
namespace {

std::vector<Neighbor> by_full_sort(const std::vector<float>& d, std::size_t k) {
  std::vector<Neighbor> all;
  for (std::size_t i = 0; i < d.size(); ++i) all.push_back({d[i], static_cast<std::int64_t>(i)});
  std::sort(all.begin(), all.end());
  all.resize(std::min(k, all.size()));
  return all;
}

void expect_same(const std::vector<Neighbor>& a, const std::vector<Neighbor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index) << i;
    EXPECT_EQ(a[i].distance, b[i].distance) << i;
  }
}

TEST(TopK, MatchesFullSortWithTies) {
  std::mt19937 rng(3);
  for (std::size_t n : {1u, 2u, 31u, 1021u, 100000u}) {
    std::vector<float> d(n);
    for (auto& x : d) x = static_cast<float>(rng() % 50);  // many ties
    for (std::size_t k : {1u, 5u, 64u, 2000u}) expect_same(select_topk(d, k), by_full_sort(d, k));
  }
  EXPECT_TRUE(select_topk({}, 3).empty());
  EXPECT_TRUE(select_topk(std::vector<float>{1, 2}, 0).empty());
}

TEST(TopK, MergeOfShardsEqualsGlobal) {
  std::mt19937 rng(4);
  std::vector<float> d(500);
  for (auto& x : d) x = static_cast<float>(rng() % 40);
  const std::size_t k = 17;
  std::vector<std::vector<std::vector<Neighbor>>> shards;
  for (std::size_t s = 0; s < 3; ++s) {
    const std::size_t b = s * 200, e = std::min<std::size_t>(d.size(), b + 200);
    auto local = select_topk(std::span<const float>(d.data() + b, e - b), k);
    for (auto& n : local) n.index += static_cast<std::int64_t>(b);
    local.push_back({0, -1});  // padding is ignored
    shards.push_back({local});
  }
  expect_same(merge_topk(shards, 1, k)[0], by_full_sort(d, k));
}

}  // namespace
}  // namespace lcrwmd
