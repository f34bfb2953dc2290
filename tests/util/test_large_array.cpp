// Scratch arrays: usable at once, and a released mapping serves the next request of its size.
#include <gtest/gtest.h>

#include <cstdint>

#include "util/large_array.h"

namespace lcrwmd {
namespace {

TEST(LargeArray, GrowsKeepsCapacityAndIsWritable) {
  LargeArray<std::uint32_t> a;
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  a.resize(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint32_t>(i * 7);
  const std::uint32_t* p = a.data();
  a.resize(10);  // shrinking keeps the mapping and the contents
  EXPECT_EQ(a.data(), p);
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a[9], 63u);
  a.resize(5u << 20);  // past the capacity: a new mapping
  EXPECT_EQ(a.size(), 5u << 20);
  a[a.size() - 1] = 42;
  EXPECT_EQ(a[a.size() - 1], 42u);
}

TEST(LargeArray, ReleasedMappingsAreReusedBySimilarSizes) {
  scratch::trim();  // the tests before this one in the process may have left mappings pooled
  const void* first = nullptr;
  {
    LargeArray<float> a(3u << 20);
    first = a.data();
  }
  // Within the same size class (1/16 of a power of two apart): the pooled mapping comes back.
  {
    LargeArray<float> b((3u << 20) - 1000);
    EXPECT_EQ(static_cast<const void*>(b.data()), first);
    b[0] = 7.0f;
    // Smaller, also while another is live: a mapping of its own.
    LargeArray<float> small(1000);
    EXPECT_NE(static_cast<const void*>(small.data()), first);
  }
  // Smaller again: the smallest pooled mapping that fits.
  {
    LargeArray<float> b(1000);
    EXPECT_NE(static_cast<const void*>(b.data()), first);
  }
  // Too large for any: the largest pooled mapping grows, its pages (here: contents) kept.
  const void* grown = nullptr;
  {
    LargeArray<float> c(64u << 20);
    EXPECT_EQ(c[0], 7.0f);
    c[c.size() - 1] = 1.0f;
    EXPECT_EQ(c[c.size() - 1], 1.0f);
    grown = c.data();
  }
  // A much smaller buffer does not take it (a mapping of its own), so the large one that
  // follows, batch after batch, finds its pages again.
  LargeArray<float> small(3u << 20);
  EXPECT_NE(static_cast<const void*>(small.data()), grown);
  LargeArray<float> again(60u << 20);
  EXPECT_EQ(static_cast<const void*>(again.data()), grown);
}

// Batches whose arrays grow a little each time: each array grows its own pooled mapping, and
// the other pooled mappings stay for the requests they fit (the pages of both kept).
TEST(LargeArray, GrowingOneMappingKeepsTheOthersPooled) {
  scratch::trim();
  {
    LargeArray<float> z(4u << 20), bounds(12u << 20);
    z[0] = 1.0f;
    bounds[0] = 2.0f;
  }
  LargeArray<float> z(5u << 20);  // the next batch: each a little larger than its mapping
  EXPECT_EQ(z[0], 1.0f);
  LargeArray<float> bounds(15u << 20);
  EXPECT_EQ(bounds[0], 2.0f);
}

// A huge-page buffer holds what is written to it, moves without copying, and is handed back
// (empty ones too).
TEST(HugePageBuffer, HoldsWhatIsWrittenAndMoves) {
  HugePageBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  HugePageBuffer zero(0);
  EXPECT_EQ(zero.size(), 0u);
  HugePageBuffer a((3u << 20) + 5);
  ASSERT_NE(a.data(), nullptr);
  for (std::size_t i = 0; i < a.size(); i += 4093) a.data()[i] = static_cast<std::byte>(i % 251);
  const std::byte* where = a.data();
  HugePageBuffer b(std::move(a));
  EXPECT_EQ(b.data(), where);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved from, empty
  for (std::size_t i = 0; i < b.size(); i += 4093)
    ASSERT_EQ(b.data()[i], static_cast<std::byte>(i % 251)) << i;
  a = HugePageBuffer(64);
  a = std::move(b);
  EXPECT_EQ(a.data(), where);
}

}  // namespace
}  // namespace lcrwmd
