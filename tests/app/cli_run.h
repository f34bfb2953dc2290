#pragma once
// Running the lcrwmd command line from a test: its exit code, stdout and stderr; and a small
// index to run it on.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"

namespace lcrwmd::test {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs a shell command line, capturing its exit code, stdout and stderr.
inline CliRun lcrwmd_via(const std::string& command) {
  const fs::path out = temp_dir() / "cli.out", err = temp_dir() / "cli.err";
  const std::string cmd = command + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

inline CliRun lcrwmd(const std::string& args) {
  return lcrwmd_via(std::string(LCRWMD_CLI) + " " + args);
}

// The bundled demo corpus (data/demo), and its training documents indexed into tmp(name).
inline std::string demo_dir() { return std::string(LCRWMD_SOURCE_DIR) + "/data/demo"; }
inline std::string demo_index(const std::string& name) {
  const std::string demo = demo_dir(), path = tmp(name);
  const CliRun r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                          "/train.tsv --stopwords " + demo + "/stop_words.txt --output " + path);
  EXPECT_EQ(r.code, 0) << r.err;
  return path;
}

// An index of four documents (one of them left empty by the stop words) over seven words.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    emb = test::write_file("cli_emb.vec",
                           "7 3\nsoccer 1 0 0\nfootball 0.9 0.1 0\ngoal 1 1 0\ntennis 0 0 1\n"
                           "racket 0 0.2 1\nserve 0.1 0 0.9\nball 0.5 0.5 0.5\n");
    docs = test::write_file("cli_docs.tsv",
                            "s1\tsport\tSoccer goal! Football goal.\n"
                            "t1\ttennis\tTennis racket, serve.\n"
                            "e1\tnone\tthe of and\n"
                            "b1\tsport\tball\n");
    stop = test::write_file("cli_stop.txt", "the\nof\nand\n");
    index = tmp("cli.idx");
    const CliRun r = lcrwmd("build --embeddings " + emb + " --docs " + docs + " --stopwords " +
                            stop + " --output " + index);
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_NE(r.err.find("e1"), std::string::npos) << "empty document not reported: " << r.err;
  }
  std::string emb, docs, stop, index;
};

}  // namespace lcrwmd::test
