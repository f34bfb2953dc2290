// Range search (SearchOptions::max_distance): every document within the range, against brute
// force over the full matrix, with ranges exactly at a distance that occurs (ties), for every
// method, one index and shards; and what the bounds save.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "app/cli_run.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/pairs.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/topk.h"
#include "methods/segment_fixtures.h"

namespace lcrwmd {
namespace {

using test::every_method;
using test::name;

// Row q's documents within r, nearest first (ties by the smaller index), at most k.
std::vector<Neighbor> within(const std::vector<float>& m, std::size_t n, std::size_t q, float r,
                             std::size_t k) {
  std::vector<Neighbor> out;
  for (std::size_t i = 0; i < n; ++i)
    if (m[q * n + i] <= r) out.push_back({m[q * n + i], static_cast<std::int64_t>(i)});
  std::sort(out.begin(), out.end());
  if (out.size() > k) out.resize(k);
  return out;
}

void expect_range(const SearchResults& got, const std::vector<float>& m, std::size_t n, float r,
                  std::size_t k, std::size_t q, const std::string& what) {
  const std::vector<Neighbor> want = within(m, n, q, r, k);
  for (std::size_t t = 0; t < got.k; ++t) {
    const std::size_t at = q * got.k + t;
    if (t < want.size()) {
      EXPECT_EQ(got.indices[at], want[t].index) << what << " query " << q << " rank " << t;
      EXPECT_EQ(got.distances[at], want[t].distance) << what << " query " << q << " rank " << t;
    } else {
      EXPECT_EQ(got.indices[at], -1) << what << " query " << q << " rank " << t;
    }
  }
}

TEST(RangeSearch, EveryDocumentWithinTheRangeExactlyAtTies) {
  const IndexData data = test::random_index(90, 70, 5, 8, 13);
  const Index index = Index::from_data(data);
  const QuerySet q = test::mixed_queries(index, 5, 8);
  const std::size_t n = index.n_docs();
  const test::Split s = test::split(data, 3);
  const SegmentSet shards(s.pointers());
  const QuerySet qs = translate_queries(index, q, shards.segment(0));  // over the first shard's
  const CollectionSearcher collection(shards, {});
  for (SearchOptions o : every_method()) {
    o.prune = false;
    const std::vector<float> m = test::matrix(index, q, o);
    const std::vector<float> ms = test::matrix(collection, qs, o);
    o.prune = true;
    // Ranges at distances that occur: the 1st, 5th and 30th smallest of the first query's row,
    // and below everything.
    std::vector<float> row(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
    std::sort(row.begin(), row.end());
    for (const float r : {row[0], row[4], row[29], -1.0f}) {
      o.max_distance = r;
      for (const std::size_t k : {n, std::size_t{3}}) {
        const SearchResults one = CpuSearcher(index).search(q, k, o);
        const SearchResults sharded = collection.search(qs, k, o);
        for (std::size_t j = 0; j < q.size(); ++j) {
          expect_range(one, m, n, r, k, j, name(o) + " one index");
          expect_range(sharded, ms, n, r, k, j, name(o) + " shards");
        }
      }
    }
  }
}

// A bounded method computes exact distances only where its bound is within the range.
TEST(RangeSearch, TheBoundsSettleWhatLiesBeyond) {
  const Index index = Index::from_data(test::random_index(150, 80, 5, 8, 29));
  const QuerySet q = test::mixed_queries(index, 4, 9);
  for (SearchOptions o : every_method()) {
    if (!o.method->bounded || o.direction == Direction::document_to_query) continue;
    SearchStats all, ranged;
    CpuSearcher(index).search(q, index.n_docs(), o, &all);
    o.prune = false;
    const std::vector<float> m = test::matrix(index, q, o);
    o.prune = true;
    std::vector<float> sorted = m;
    std::sort(sorted.begin(), sorted.end());
    o.max_distance = sorted[sorted.size() / 20];
    CpuSearcher(index).search(q, index.n_docs(), o, &ranged);
    EXPECT_LT(ranged.refined, all.refined) << name(o);
  }
}

TEST(RangeSearch, ANanRangeIsRefused) {
  const Index index = Index::from_data(test::random_index(10, 20, 3, 4, 1));
  SearchOptions o;
  o.max_distance = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(CpuSearcher(index).search(test::mixed_queries(index, 1, 2), 3, o), Error);
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd::test {
namespace {

// search --max-distance: the lines of the plain search within the range, --k still capping.
TEST(CliRangeSearch, TheSearchsLinesWithinTheRange) {
  const std::string demo = demo_dir();
  const std::string index = demo_index("range_demo.idx");
  for (const std::string method : {"lc-rwmd", "wmd"}) {
    const std::string common =
        "search --index " + index + " --queries " + demo + "/queries.tsv --method " + method;
    const CliRun all = lcrwmd(common + " --k 100000");
    ASSERT_EQ(all.code, 0) << all.err;
    std::vector<std::string> lines;
    std::vector<double> distances;
    std::istringstream in(all.out);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
      distances.push_back(std::stod(line.substr(line.rfind('\t') + 1)));
    }
    ASSERT_GT(lines.size(), 100u);
    std::vector<double> sorted = distances;
    std::sort(sorted.begin(), sorted.end());
    const std::string r = lines[static_cast<std::size_t>(
        std::find(distances.begin(), distances.end(), sorted[sorted.size() / 10]) -
        distances.begin())];
    const std::string range = r.substr(r.rfind('\t') + 1);  // a distance that occurs, as printed
    const double limit = std::stod(range);
    for (const std::size_t k : {100000, 3}) {
      const CliRun got = lcrwmd(common + " --k " + std::to_string(k) + " --max-distance " + range);
      ASSERT_EQ(got.code, 0) << got.err;
      std::string want;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string rank = lines[i].substr(0, lines[i].find('\t', lines[i].find('\t') + 1));
        const std::size_t at = std::stoul(rank.substr(rank.find('\t') + 1));
        if (distances[i] <= limit && at <= k) want += lines[i] + '\n';
      }
      EXPECT_EQ(got.out, want) << method << " k " << k;
    }
  }
  const CliRun nan =
      lcrwmd("search --index " + index + " --queries " + demo + "/queries.tsv --max-distance nan");
  EXPECT_NE(nan.code, 0);
}

}  // namespace
}  // namespace lcrwmd::test

namespace lcrwmd {
namespace {

// Every pair within the range, once, against the full matrix of the documents against
// themselves: ranges exactly at distances that occur, every symmetric method.
TEST(Pairs, EveryPairWithinTheRangeOnce) {
  const Index index = Index::from_data(test::random_index(70, 60, 5, 8, 31));
  const std::size_t n = index.n_docs();
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const QuerySet docs = query_set_from_index(index, all);
  for (SearchOptions o : test::every_method()) {
    if (o.direction != Direction::symmetric) {
      EXPECT_THROW(pairs_within(index, CpuSearcher(index), 1.0f, o, [](auto) {}), Error);
      continue;
    }
    o.prune = false;
    const std::vector<float> m = test::matrix(index, docs, o);
    o.prune = true;
    std::vector<float> upper;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) upper.push_back(m[a * n + b]);
    std::sort(upper.begin(), upper.end());
    for (const float r : {upper[0], upper[upper.size() / 50], upper[upper.size() / 4]}) {
      std::vector<Pair> got;
      SearchStats st;
      pairs_within(
          index, CpuSearcher(index), r, o,
          [&](std::span<const Pair> p) { got.insert(got.end(), p.begin(), p.end()); }, &st);
      std::vector<Pair> want;
      for (std::size_t a = 0; a < n; ++a) {
        std::vector<Pair> row;
        for (std::size_t b = a + 1; b < n; ++b)
          if (m[a * n + b] <= r) row.push_back({a, b, m[a * n + b]});
        std::sort(row.begin(), row.end(), [](const Pair& x, const Pair& y) {
          return x.distance < y.distance || (x.distance == y.distance && x.b < y.b);
        });
        want.insert(want.end(), row.begin(), row.end());
      }
      ASSERT_EQ(got.size(), want.size()) << name(o) << " r " << r;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].a, want[i].a) << name(o);
        EXPECT_EQ(got[i].b, want[i].b) << name(o);
        EXPECT_EQ(got[i].distance, want[i].distance) << name(o);
      }
    }
  }
}

}  // namespace

namespace test {
namespace {

// lcrwmd pairs: the library's pairs, as TSV of the documents' ids.
TEST(CliPairs, TheLibrarysPairsById) {
  const std::string path = demo_index("pairs_demo.idx");
  const Index index = Index::load(path);
  SearchOptions o;
  o.method = Method("wmd");
  for (const char* r : {"7.5", "0"}) {
    std::string want;
    pairs_within(index, CpuSearcher(index), std::stof(r), o, [&](std::span<const Pair> p) {
      char buf[32];
      for (const Pair& x : p) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x.distance));
        want += std::string(index.doc_id(x.a)) + '\t' + std::string(index.doc_id(x.b)) + '\t' +
                buf + '\n';
      }
    });
    const CliRun got =
        lcrwmd("pairs --index " + path + " --method wmd --max-distance " + r + " --backend cpu");
    ASSERT_EQ(got.code, 0) << got.err;
    EXPECT_EQ(got.out, want) << r;
    EXPECT_NE(got.err.find("EMD solves"), std::string::npos) << got.err;
  }
  const CliRun one_sided = lcrwmd("pairs --index " + path + " --one-sided --max-distance 1");
  EXPECT_NE(one_sided.code, 0);
  EXPECT_NE(one_sided.err.find("symmetric"), std::string::npos) << one_sided.err;
  const CliRun q2d =
      lcrwmd("pairs --index " + path + " --direction query-to-document --max-distance 1");
  EXPECT_NE(q2d.code, 0);
  EXPECT_NE(q2d.err.find("symmetric"), std::string::npos) << q2d.err;
}

}  // namespace
}  // namespace test
}  // namespace lcrwmd
