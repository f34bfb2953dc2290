// lcrwmd learn and build --metric from the command line: a metric learned from the demo's
// labels, applied by a build and to its queries; the refusals, naming the file; and an
// interrupted learning that leaves nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace lcrwmd::test {
namespace {

TEST(CliLearn, LearnsAMetricThatABuildAppliesAndQueriesFollow) {
  const std::string demo = demo_dir(), train = demo_index("learn_train.idx");
  const std::string metric = tmp("learned.lcm");
  CliRun r = lcrwmd("learn --index " + train + " --output " + metric +
                    " --dim 12 --centroid-epochs 3 --epochs 1 --neighbors 5 --seed 3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("centroid epoch 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("transport epoch 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("held-out error"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(metric));
  // The summary: every epoch with its own work, adding up to the whole's.
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"], metric);
  EXPECT_EQ(j["map"], nlohmann::json({12, 300})) << r.out;
  EXPECT_EQ(j["options"]["lambda"], 10.0) << r.out;
  ASSERT_EQ(j["epochs"].size(), 4u) << r.out;
  EXPECT_EQ(j["epochs"][0]["stage"], "centroid");
  EXPECT_TRUE(j["epochs"][0]["cost_scale"].is_null());
  EXPECT_EQ(j["epochs"][3]["stage"], "transport");
  EXPECT_GT(j["epochs"][3]["cost_scale"].get<double>(), 0);
  std::size_t transports = 0;
  for (const auto& e : j["epochs"]) transports += e["work"]["transports"].get<std::size_t>();
  EXPECT_GT(j["epochs"][3]["work"]["transports"].get<std::size_t>(), 0u);
  EXPECT_LE(transports, j["work"]["transports"].get<std::size_t>());
  EXPECT_GE(j["held_out_error"].get<double>(), 0);
  EXPECT_GE(j["unsupervised_error"].get<double>(), 0);
  const std::string built = tmp("learned.idx");
  r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
             "/train.tsv --stopwords " + demo + "/stop_words.txt --metric " + metric +
             " --output " + built);
  ASSERT_EQ(r.code, 0) << r.err;
  r = lcrwmd("info --index " + built);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("dimension    12"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric       learned"), std::string::npos) << r.out;
  // Queries read from text, with the vectors the index was built from (of the metric's input
  // dimension) for words it lacks.
  r = lcrwmd("search --index " + built + " --queries " + demo + "/queries.tsv --embeddings " +
             demo + "/embeddings.bin --k 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\t1\t"), std::string::npos) << r.out;
  // Other vectors of the same dimension: refused, naming the metric.
  std::string row;
  for (int e = 0; e < 300; ++e) row += " 0.1";
  const std::string other =
      write_file("learn_other.vec", "2 300\nfootball" + row + "\ntennis" + row + "\n");
  r = lcrwmd("build --embeddings " + other + " --docs " + demo + "/train.tsv --metric " + metric +
             " --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(metric), std::string::npos) << r.err;
  r = lcrwmd("build --train-vectors --docs " + demo + "/train.tsv --metric " + metric +
             " --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(metric), std::string::npos) << r.err;
  // Scaled otherwise than it was learned: refused.
  r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
             "/train.tsv --metric " + metric + " --unit-vectors --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(metric), std::string::npos) << r.err;
  // A damaged metric file: named.
  const std::string damaged = write_file("damaged.lcm", "LCRWMDMT not a metric");
  r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
             "/train.tsv --metric " + damaged + " --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("damaged.lcm"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp("x.idx")));
}

TEST(CliLearn, RefusesAnIndexWithoutLabelsOrOfOneClass) {
  const std::string demo = demo_dir();
  for (const auto& [label, name] :
       {std::pair<std::string, std::string>{"", "nolabel"}, {"sport", "oneclass"}}) {
    const std::string docs = write_file(
        name + ".tsv", "a\t" + label + "\tfootball match goal\nb\t" + label +
                           "\ttennis racket serve\nc\t" + label + "\tcricket bat wicket\n");
    const std::string index = tmp(name + ".idx");
    ASSERT_EQ(lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + docs +
                     " --output " + index)
                  .code,
              0);
    const CliRun r = lcrwmd("learn --index " + index + " --output " + tmp(name + ".lcm"));
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find(index), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp(name + ".lcm")));
  }
}

// SIGINT while learning: a non-zero exit, and neither the metric nor a temporary left.
TEST(CliLearn, AnInterruptedLearningLeavesNoFile) {
  const std::string train = demo_index("learn_interrupted.idx");
  fs::create_directory(tmp("learn_interrupted"));
  const CliRun r =
      lcrwmd_via("timeout --preserve-status -s INT 2 " + std::string(LCRWMD_CLI) +
                 " learn --index " + train + " --output " + tmp("learn_interrupted/m.lcm") +
                 " --centroid-epochs 100000 --patience 100000 --batch 4");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp("learn_interrupted")));
}

}  // namespace
}  // namespace lcrwmd::test
