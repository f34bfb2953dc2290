// kNN classification (lcrwmd/classify.h): the vote eval knn counts errors with, its votes in
// order, and the neighbours that had none; the CLI's classify against its own search.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "app/cli_run.h"
#include "lcrwmd/classify.h"
#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"

namespace lcrwmd {
namespace {

// Results of n queries over documents labelled by `labels`, k random neighbours each (some
// rows short, as where the index holds fewer).
SearchResults random_results(std::size_t n, std::size_t k, std::size_t docs, unsigned seed) {
  std::mt19937 rng(seed);
  SearchResults r;
  r.n_queries = n;
  r.k = k;
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t j = 0; j < k; ++j) {
      const bool short_row = q % 7 == 3 && j >= k / 2;
      r.indices.push_back(short_row ? -1 : static_cast<std::int64_t>(rng() % docs));
      r.distances.push_back(static_cast<float>(j));
    }
  return r;
}

TEST(Classify, TheVoteOfEvalKnnWithItsVotesInOrder) {
  const std::vector<std::string> labels = {"a", "b", "c", "a", "b", "d", "c", "a", "e", "b"};
  const LabelOf label_of = [&](std::size_t d) { return std::string_view(labels[d]); };
  const auto name_of = [](std::size_t d) { return std::to_string(d); };
  const SearchResults r = random_results(200, 9, labels.size(), 3);
  for (const std::size_t k : {1, 2, 4, 5, 9, 12}) {
    const std::vector<Classification> cs = classify(r, k, label_of, name_of);
    ASSERT_EQ(cs.size(), r.n_queries);
    for (std::size_t q = 0; q < r.n_queries; ++q) {
      std::vector<std::string_view> voters;
      for (std::size_t j = 0; j < std::min(k, r.k) && r.indices[q * r.k + j] >= 0; ++j)
        voters.push_back(labels[static_cast<std::size_t>(r.indices[q * r.k + j])]);
      const Classification& c = cs[q];
      EXPECT_EQ(c.voters, voters.size());
      EXPECT_EQ(c.label, knn_vote(voters, voters.size())) << "query " << q << " k " << k;
      std::map<std::string, std::size_t> counts;
      for (const std::string_view v : voters) ++counts[std::string(v)];
      std::size_t total = 0;
      for (std::size_t v = 0; v < c.votes.size(); ++v) {
        EXPECT_EQ(c.votes[v].second, counts[c.votes[v].first]);
        if (v > 0) {
          EXPECT_LE(c.votes[v].second, c.votes[v - 1].second);
        }
        total += c.votes[v].second;
      }
      EXPECT_EQ(total, c.voters);
      EXPECT_EQ(c.votes.size(), counts.size());
      if (!c.votes.empty()) {
        EXPECT_EQ(c.votes.front().first, c.label);
      }
    }
  }
}

TEST(Classify, ANeighbourWithoutALabelIsAnError) {
  const std::vector<std::string> labels = {"a", "", "b"};
  SearchResults r;
  r.n_queries = 1;
  r.k = 3;
  r.indices = {0, 1, 2};
  r.distances = {0, 1, 2};
  try {
    classify(
        r, 3, [&](std::size_t d) { return std::string_view(labels[d]); },
        [](std::size_t d) { return "doc" + std::to_string(d); });
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'doc1' has no label"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(classify(
      r, 1, [&](std::size_t d) { return std::string_view(labels[d]); },
      [](std::size_t d) { return std::to_string(d); }));
}

}  // namespace

namespace test {
namespace {

std::vector<std::vector<std::string>> tsv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, '\t');) rows.back().push_back(f);
  }
  return rows;
}

// classify's labels and neighbours are its search's top-k, voted on: compared with the search
// command's own output and the training labels.
TEST(CliClassify, TheVoteOfTheSearchsNeighbours) {
  const std::string demo = demo_dir();
  const std::string index = demo_index("classify_demo.idx");
  std::map<std::string, std::string> label;
  for (const auto& row : tsv_rows(slurp(demo + "/train.tsv"))) label[row.at(0)] = row.at(1);
  for (const std::string method : {"lc-rwmd", "wmd"}) {
    const std::string common =
        " --index " + index + " --queries " + demo + "/queries.tsv --k 5 --method " + method;
    const CliRun search = lcrwmd("search" + common);
    ASSERT_EQ(search.code, 0) << search.err;
    std::map<std::string, std::vector<std::string>> neighbours;
    for (const auto& row : tsv_rows(search.out)) neighbours[row.at(0)].push_back(row.at(2));
    const CliRun out = lcrwmd("classify" + common + " --output " + tmp("labels.tsv"));
    ASSERT_EQ(out.code, 0) << out.err;
    const auto rows = tsv_rows(slurp(tmp("labels.tsv")));
    ASSERT_EQ(rows.size(), neighbours.size());
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 4u);
      const std::vector<std::string>& ids = neighbours.at(row[0]);
      std::vector<std::string_view> voters;
      for (const std::string& id : ids) voters.push_back(label.at(id));
      EXPECT_EQ(row[1], knn_vote(voters, voters.size())) << row[0];
      std::string listed;
      for (std::size_t j = 0; j < ids.size(); ++j) listed += (j ? "," : "") + ids[j];
      std::string got;  // the neighbours column without its distances
      std::istringstream in(row[3]);
      for (std::string item; std::getline(in, item, ',');) {
        if (!got.empty()) got += ',';
        got += item.substr(0, item.rfind(':'));
      }
      EXPECT_EQ(got, listed) << row[0];
    }
    const CliRun json = lcrwmd("classify" + common + " --json");
    ASSERT_EQ(json.code, 0) << json.err;
    const auto all = nlohmann::json::parse(json.out);
    ASSERT_EQ(all.size(), rows.size());
    for (std::size_t q = 0; q < rows.size(); ++q) {
      EXPECT_EQ(all[q]["id"], rows[q][0]);
      EXPECT_EQ(all[q]["label"], rows[q][1]);
      EXPECT_EQ(all[q]["neighbours"].size(), neighbours.at(rows[q][0]).size());
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace lcrwmd
