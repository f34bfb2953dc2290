// Word vectors trained from the command line: `lcrwmd vectors train`, `lcrwmd build
// --train-vectors` (a collection records the model and adds use it), queries' unseen words
// looked up in the model, and a training stopped by a signal (no file left).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "app/cli_run.h"

namespace lcrwmd::test {
namespace {

// Small and fast: the demo's 120 documents, dimension 16, two passes, one thread.
const std::string kQuick = " --dim 16 --epochs 2 --min-count 2 --buckets 5000 --threads 1";

TEST(CliVectors, TrainsAModelThatBuildsAndSearches) {
  const std::string demo = demo_dir(), model = tmp("cli_demo.bin");
  CliRun r = lcrwmd("vectors train --docs " + demo + "/train.tsv --stopwords " + demo +
                    "/stop_words.txt --output " + model + kQuick + " --seed 5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("words/s"), std::string::npos) << r.err;
  const std::string again = tmp("cli_demo_again.bin");
  r = lcrwmd("vectors train --docs " + demo + "/train.tsv --stopwords " + demo +
             "/stop_words.txt --output " + again + kQuick + " --seed 5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(model), slurp(again));

  // A model the engine trained is built at unit length by default, as --train-vectors builds
  // it; --no-unit-vectors and a table of vectors leave the vectors as they are.
  r = lcrwmd("build --embeddings " + model + " --docs " + demo + "/train.tsv --stopwords " + demo +
             "/stop_words.txt --output " + tmp("cli_demo_ft.idx"));
  ASSERT_EQ(r.code, 0) << r.err;
  r = lcrwmd("info --index " + tmp("cli_demo_ft.idx"));
  EXPECT_NE(r.out.find("unit length"), std::string::npos) << r.out;
  for (const std::string& raw : {"--embeddings " + model + " --no-unit-vectors",
                                 "--embeddings " + demo + "/embeddings.bin"}) {
    r = lcrwmd("build " + raw + " --docs " + demo + "/train.tsv --output " + tmp("cli_raw.idx"));
    ASSERT_EQ(r.code, 0) << r.err;
    r = lcrwmd("info --index " + tmp("cli_raw.idx"));
    EXPECT_EQ(r.out.find("unit length"), std::string::npos) << raw << ": " << r.out;
  }
  // Misspelled words the model never saw: kept with --embeddings, from their n-grams.
  const std::string q = write_file("cli_typos.tsv", "q\t\tfederrer wimbledonn tenniss\n");
  r = lcrwmd("search --index " + tmp("cli_demo_ft.idx") + " --queries " + q +
             " --k 3 --embeddings " + model);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  r = lcrwmd("search --index " + tmp("cli_demo_ft.idx") + " --queries " + q + " --k 3");
  EXPECT_EQ(r.out, "");  // without the model they are dropped
  // Another model is refused at query time.
  r = lcrwmd("vectors train --docs " + demo + "/train.tsv --output " + tmp("cli_other.bin") +
             kQuick + " --seed 6");
  ASSERT_EQ(r.code, 0) << r.err;
  r = lcrwmd("search --index " + tmp("cli_demo_ft.idx") + " --queries " + q +
             " --k 3 --embeddings " + tmp("cli_other.bin"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("not the embeddings the index was built from"), std::string::npos) << r.err;
}

TEST(CliVectors, BuildTrainsOnItsDocumentsAndACollectionAddsWithTheModel) {
  const std::string demo = demo_dir(), dir = tmp("cli_trained_collection");
  CliRun r = lcrwmd("build --train-vectors --docs " + demo + "/train.tsv --stopwords " + demo +
                    "/stop_words.txt --output " + dir + " --collection" + kQuick);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string model = tmp("cli_trained_collection.vectors.bin");
  ASSERT_TRUE(std::filesystem::exists(model)) << r.err;
  // Vectors trained here are scaled to unit length unless asked otherwise.
  EXPECT_NE(lcrwmd("info --index " + dir).out.find("unit length"), std::string::npos);
  r = lcrwmd("build --embeddings " + model + " --docs " + demo + "/train.tsv --output " +
             tmp("cli_raw.idx") + " --no-unit-vectors");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lcrwmd("info --index " + tmp("cli_raw.idx")).out.find("unit length"),
            std::string::npos);
  // An add takes the recorded model, unseen words included.
  const std::string more =
      write_file("cli_more.tsv", "new1\ttennis\tfederrer wins at wimbledonn\n");
  r = lcrwmd("add --index " + dir + " --docs " + more);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("added 1 document "), std::string::npos) << r.err;
  // --train-vectors and --embeddings together, or neither: refused.
  r = lcrwmd("build --train-vectors --embeddings " + model + " --docs " + demo +
             "/train.tsv --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  r = lcrwmd("build --docs " + demo + "/train.tsv --output " + tmp("x.idx"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--train-vectors"), std::string::npos) << r.err;
  // add on an index file says how to get a collection.
  r = lcrwmd("add --index " + demo_index("cli_plain.idx") + " --docs " + more);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("build --collection"), std::string::npos) << r.err;
}

// SIGINT while training: a non-zero exit, and neither the model nor a temporary left.
TEST(CliVectors, AnInterruptedTrainingLeavesNoFile) {
  const std::string demo = demo_dir();
  std::filesystem::create_directory(tmp("interrupted"));
  const std::string out = tmp("interrupted/model.bin");
  const CliRun r = lcrwmd_via("timeout --preserve-status -s INT 1 " + std::string(LCRWMD_CLI) +
                              " vectors train --docs " + demo + "/train.tsv --output " + out +
                              " --epochs 100000 --threads 1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp("interrupted")));
}

}  // namespace
}  // namespace lcrwmd::test
