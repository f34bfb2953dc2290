// The command line end to end: build -> search -> output format, unknown words, empty
// documents, bad input (clear error, non-zero exit, no output file), pairwise, info, synth.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lcrwmd/gpu.h"
#include "lcrwmd/method.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs a shell command line, capturing its exit code, stdout and stderr.
CliRun lcrwmd_via(const std::string& command) {
  const fs::path out = test::temp_dir() / "cli.out", err = test::temp_dir() / "cli.err";
  const std::string cmd = command + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

CliRun lcrwmd(const std::string& args) { return lcrwmd_via(std::string(LCRWMD_CLI) + " " + args); }

std::string tmp(const std::string& name) { return (test::temp_dir() / name).string(); }

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

TEST_F(Cli, BuildSearchOutputFormat) {
  const auto q = test::write_file("cli_q.tsv",
                                  "q1\t\tsoccer goal football goal\n"
                                  "q2\t\ttennis serve zebra\n"
                                  "q3\t\tthe unknownword\n");
  const CliRun r =
      lcrwmd("search --index " + index + " --queries " + q + " --stopwords " + stop + " --k 2");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> text;
  for (std::string l; std::getline(lines, l);) text.push_back(l);
  ASSERT_EQ(text.size(), 4u) << r.out;  // q3 has no known word: excluded
  for (const auto& l : text) {
    // query_id, rank (from 1), doc_id, distance (a finite number, 9 significant digits)
    std::vector<std::string> f;
    std::istringstream fields(l);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 4u) << l;
    EXPECT_FALSE(f[0].empty());
    EXPECT_TRUE(f[1] == "1" || f[1] == "2") << l;
    EXPECT_FALSE(f[2].empty());
    char* end = nullptr;
    const double d = std::strtod(f[3].c_str(), &end);
    EXPECT_TRUE(*end == '\0' && std::isfinite(d) && d >= 0) << l;
    char again[32];
    std::snprintf(again, sizeof again, "%.9g", d);
    EXPECT_EQ(f[3], again) << "not printed with 9 significant digits";
  }
  EXPECT_EQ(text[0], "q1\t1\ts1\t0");  // the same text as s1: distance exactly 0
  EXPECT_EQ(text[1].substr(0, 5), "q1\t2\t");
  EXPECT_EQ(text[2].substr(0, 10), "q2\t1\tt1\t0.");
  EXPECT_NE(r.err.find("q3"), std::string::npos) << r.err;  // reported by id
  // Words the index lacks, dropped for want of --embeddings: a warning naming the fix.
  EXPECT_NE(r.err.find("warning: queries: 2 tokens (2 distinct words) not in the index dropped; "
                       "give --embeddings"),
            std::string::npos)
      << r.err;

  // --k larger than the index: every document; the unknown word resolved with --embeddings
  // (the index's own embeddings, and more words).
  const auto q2 = test::write_file("cli_q2.tsv", "q\t\ttennis zebra\n");
  const auto emb2 = test::write_file(
      "cli_emb2.txt", slurp(emb).substr(slurp(emb).find('\n') + 1) + "zebra 5 5 5\n");
  const CliRun all = lcrwmd("search --index " + index + " --queries " + q2 + " --k 100");
  const CliRun ext = lcrwmd("search --index " + index + " --queries " + q2 +
                            " --k 100 --embeddings " + emb2 + " --output " + tmp("ext.tsv"));
  ASSERT_EQ(all.code, 0) << all.err;
  ASSERT_EQ(ext.code, 0) << ext.err;
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 3);
  EXPECT_TRUE(ext.out.empty());
  const std::string ext_out = slurp(tmp("ext.tsv"));
  EXPECT_EQ(std::count(ext_out.begin(), ext_out.end(), '\n'), 3);
  EXPECT_NE(ext_out, all.out);  // zebra moved the distances
  EXPECT_NE(ext.err.find("1 words not in the index"), std::string::npos) << ext.err;

  // Query-time inputs that disagree with how the index was built: errors naming both, no output.
  const auto other_emb = test::write_file("cli_emb_other.txt", "zebra 5 5 5\ntennis 0 0 1\n");
  const auto other_stop = test::write_file("cli_stop_other.txt", "the\nof\n");
  const std::pair<std::string, std::string> refused[] = {
      {" --embeddings " + other_emb, other_emb + " against the index " + index},
      {" --stopwords " + other_stop, "--stopwords " + other_stop + ": 2 stop words"}};
  for (const auto& [flag, says] : refused) {
    const CliRun bad = lcrwmd("search --index " + index + " --queries " + q2 + flag + " --output " +
                              tmp("refused.tsv"));
    EXPECT_NE(bad.code, 0) << flag;
    EXPECT_NE(bad.err.find(says), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(tmp("refused.tsv")));
  }
  // Stop words are the index's: without --stopwords, "the" in a query is still one.
  const auto q_stop = test::write_file("cli_qstop.tsv", "q\t\tthe soccer\n");
  const CliRun with = lcrwmd("search --index " + index + " --queries " + q_stop + " --stopwords " +
                             stop + " --k 4");
  const CliRun without = lcrwmd("search --index " + index + " --queries " + q_stop + " --k 4");
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_NE(without.err.find("1 stop words"), std::string::npos) << without.err;

  // --with-text: each neighbour's text, as given, in a fifth column.
  const CliRun texts = lcrwmd("search --index " + index + " --queries " + q + " --k 1 --with-text");
  ASSERT_EQ(texts.code, 0) << texts.err;
  EXPECT_EQ(texts.out.substr(0, texts.out.find('\n')), "q1\t1\ts1\t0\tSoccer goal! Football goal.");
  const auto bare = tmp("cli_bare.idx");
  ASSERT_EQ(
      lcrwmd("build --embeddings " + emb + " --docs " + docs + " --no-text --output " + bare).code,
      0);
  const CliRun no_text = lcrwmd("search --index " + bare + " --queries " + q + " --with-text");
  EXPECT_NE(no_text.code, 0);
  EXPECT_NE(no_text.err.find("--no-text"), std::string::npos) << no_text.err;

  for (const char* method : {"wcd", "rwmd --one-sided", "lc-rwmd --one-sided"}) {
    const CliRun m = lcrwmd("search --index " + index + " --queries " + q + " --method " + method +
                            " --batch 1 --threads 1");
    ASSERT_EQ(m.code, 0) << m.err;
    EXPECT_EQ(m.out.substr(0, 10), "q1\t1\ts1\t0\n") << method;
  }
}

TEST_F(Cli, BadInputFailsCleanly) {
  const auto out = tmp("never.idx");
  const auto bad_docs = test::write_file("cli_bad.tsv", "a\tx\tfine\nbroken line\n");
  CliRun r = lcrwmd("build --embeddings " + emb + " --docs " + bad_docs + " --output " + out);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(bad_docs + ":2: malformed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  const auto bad_emb = test::write_file("cli_bad.vec", "2 3\na 1 2 3\nb 1 2\n");
  r = lcrwmd("build --embeddings " + bad_emb + " --docs " + docs + " --output " + out);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(bad_emb + ":3: wrong dimension"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = lcrwmd("search --index " + tmp("missing.idx") + " --queries " + docs);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("missing.idx"), std::string::npos);
  r = lcrwmd("search --index " + index + " --queries " + docs + " --k 0");
  EXPECT_NE(r.code, 0);
  r = lcrwmd("search --index " + index + " --queries " + docs + " --method nope");
  EXPECT_NE(r.code, 0);
  r = lcrwmd("search --index " + docs + " --queries " + docs);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("not a valid lcrwmd index"), std::string::npos) << r.err;
  r = lcrwmd("search --index " + index + " --queries " + docs + " --output /nonexistent/dir/r.tsv");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("/nonexistent/dir/r.tsv"), std::string::npos) << r.err;
  r = lcrwmd("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* sub : {"build", "embeddings", "search", "pairwise", "eval", "info", "synth",
                          "devices", "explain", "serve"})
    EXPECT_NE(r.out.find(std::string("\n  ") + sub + " "), std::string::npos) << sub << r.out;
}

TEST_F(Cli, WmdSearchAndEval) {
  const auto q = test::write_file("cli_eq.tsv",
                                  "q1\tsport\tsoccer goal football\n"
                                  "q2\ttennis\ttennis serve racket\n"
                                  "q3\tsport\tball goal\n");
  // Pruned and brute-force WMD give the same lines.
  const std::string base = "search --index " + index + " --queries " + q + " --method wmd --k 3";
  const CliRun pruned = lcrwmd(base);
  const CliRun brute = lcrwmd(base + " --prune none");
  ASSERT_EQ(pruned.code, 0) << pruned.err;
  ASSERT_EQ(brute.code, 0) << brute.err;
  EXPECT_EQ(pruned.out, brute.out);
  EXPECT_NE(pruned.err.find("EMD solves"), std::string::npos) << pruned.err;

  const CliRun knn =
      lcrwmd("eval knn --index " + index + " --queries " + q + " --method wmd --k 1,2,3 --json");
  ASSERT_EQ(knn.code, 0) << knn.err;
  const auto kj = nlohmann::json::parse(knn.out);
  EXPECT_EQ(kj["eval"], "knn");
  EXPECT_EQ(kj["method"], "wmd");
  EXPECT_EQ(kj["n_queries"], 3);
  EXPECT_EQ(kj["errors"].size(), 3u);
  const double best = kj["best_error"];
  EXPECT_EQ(kj["errors"][std::to_string(kj["best_k"].get<int>())].get<double>(), best);
  EXPECT_GE(kj["seconds"].get<double>(), 0.0);
  const CliRun table = lcrwmd("eval knn --index " + index + " --queries " + q + " --k 1");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("best"), std::string::npos) << table.out;
  const CliRun overlap = lcrwmd("eval overlap --index " + index + " --queries " + q +
                                " --method lc-rwmd --reference wmd --k 1,2 --percent 50,100");
  ASSERT_EQ(overlap.code, 0) << overlap.err;
  EXPECT_NE(overlap.out.find("1.000"), std::string::npos) << overlap.out;  // k=1 within 100%
  const CliRun prec = lcrwmd("eval precision --index " + index + " --queries " + q + " --json");
  ASSERT_EQ(prec.code, 0) << prec.err;
  const auto pj = nlohmann::json::parse(prec.out);
  EXPECT_TRUE(pj["groups"].is_array() && !pj["groups"].empty()) << prec.out;
  const CliRun overlap_json = lcrwmd("eval overlap --index " + index + " --queries " + q +
                                     " --reference wmd --k 1,2 --percent 50,100 --json");
  ASSERT_EQ(overlap_json.code, 0) << overlap_json.err;
  const auto oj = nlohmann::json::parse(overlap_json.out);
  EXPECT_EQ(oj["reference"], "wmd");
  EXPECT_EQ(oj["shares"]["1"], (std::vector<double>{oj["shares"]["1"][0], 1.0}));

  // Bad input, each with the words its error must say: an unknown method, an empty test set,
  // embeddings of another dimension, unlabelled queries, a one-sided WMD, k = 0.
  const std::string eval = "eval knn --index " + index + " --queries ";
  const std::pair<std::string, std::string> bad[] = {
      {eval + q + " --method emd", "emd"},
      {eval + test::write_file("cli_empty.tsv", ""), "no queries"},
      {eval + q + " --embeddings " + test::write_file("cli_emb4.txt", "zebra 1 2 3 4\n"),
       "dimension 4"},
      {eval + test::write_file("cli_nolabel.tsv", "u1\t\tsoccer\n"), "'u1' has no label"},
      {base + " --one-sided", "--one-sided: wmd has no one-sided form"},
      {"search --index " + index + " --queries " + q + " --k 0", "--k: must be at least 1"}};
  for (const auto& [args, says] : bad) {
    const CliRun r = lcrwmd(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
  }
}

// Backends: auto runs wherever it is; cuda without a GPU is a clear error with no output file;
// wmd is CPU-only; both backends give the same neighbours where a GPU is present.
TEST_F(Cli, Backends) {
  const auto out = tmp("backend.tsv");
  const std::string base = "search --index " + index + " --queries " + docs + " --k 2";
  CliRun r = lcrwmd(base + " --backend auto --output " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string auto_results = slurp(out);
  r = lcrwmd(base + " --backend cpu --output " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("cpu"), std::string::npos) << r.err;
  const std::string cpu_results = slurp(out);
  EXPECT_FALSE(cpu_results.empty());
  r = lcrwmd("devices");
  EXPECT_EQ(r.code, 0) << r.err;
  fs::remove(out);
  r = lcrwmd(base + " --backend cuda --output " + out);
  if (gpu_device_count() == 0) {
    EXPECT_NE(r.code, 0);
    EXPECT_TRUE(r.err.find("no CUDA device") != std::string::npos ||
                r.err.find("built without CUDA") != std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(auto_results, cpu_results);  // auto fell back to the CPU
  } else {
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
  }
  r = lcrwmd(base + " --method wmd --backend cuda");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("CPU backend only"), std::string::npos) << r.err;
  r = lcrwmd(base + " --backend tpu");
  EXPECT_NE(r.code, 0);
}

TEST_F(Cli, PairwiseWritesNpy) {
  const auto q = test::write_file("cli_pq.tsv", "q1\t\tsoccer\nq2\t\tserve Racket tennis\n");
  const auto npy = tmp("m.npy"), ids = tmp("m.ids");
  const CliRun r = lcrwmd("pairwise --index " + index + " --queries " + q + " --output " + npy +
                          " --row-ids " + ids);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string bytes = slurp(npy);
  ASSERT_GE(bytes.size(), 128u);
  EXPECT_EQ(bytes.substr(1, 5), "NUMPY");
  EXPECT_NE(bytes.find("'shape': (2, 3)"), std::string::npos);
  const std::size_t header =
      10 + static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ(header % 64, 0u);
  ASSERT_EQ(bytes.size(), header + 2 * 3 * sizeof(float));
  float m[6];
  std::memcpy(m, bytes.data() + header, sizeof m);
  EXPECT_EQ(m[4], 0.0f);  // q2 has the words of t1
  EXPECT_GT(m[3], m[4]);
  EXPECT_EQ(slurp(ids), "q1\nq2\n");
  // The same distances as search reports (t1 is document 1).
  const CliRun s = lcrwmd("search --index " + index + " --queries " + q + " --k 3");
  ASSERT_EQ(s.code, 0) << s.err;
  char expected[64];
  std::snprintf(expected, sizeof expected, "q2\t1\tt1\t%.9g\n", static_cast<double>(m[4]));
  EXPECT_NE(s.out.find(expected), std::string::npos) << s.out;
  std::snprintf(expected, sizeof expected, "\ts1\t%.9g\n", static_cast<double>(m[3]));
  EXPECT_NE(s.out.find(expected), std::string::npos) << s.out;
}

TEST_F(Cli, ExplainShowsTheFlowOfTheReportedDistance) {
  const auto q = test::write_file("cli_explain_q.tsv", "q1\t\tsoccer goal tennis\n");
  const std::string common = " --index " + index + " --queries " + q + " --stopwords " + stop;
  CliRun r = lcrwmd("search" + common + " --k 1 --method wmd");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string distance = r.out.substr(r.out.rfind('\t') + 1, r.out.size() - 1);  // "%.9g\n"
  r = lcrwmd("explain" + common + " --doc s1 --json");  // JSON: every flow, unasked
  ASSERT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_FALSE(json.contains("flows_left_out"));
  ASSERT_GT(json["flows"].size(), 1u);
  // --top cuts each list and says how many it left out.
  r = lcrwmd("explain" + common + " --doc s1 --json --top 1");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cut = nlohmann::json::parse(r.out);
  EXPECT_EQ(cut["flows"].size(), 1u);
  EXPECT_EQ(cut["flows_left_out"], json["flows"].size() - 1);
  EXPECT_EQ(json["query"], "q1");
  EXPECT_EQ(json["doc"], "s1");
  EXPECT_EQ(json["method"], "wmd");
  char printed[32];
  std::snprintf(printed, sizeof printed, "%.9g\n", json["distance"].get<double>());
  EXPECT_EQ(printed, distance);  // the distance search reports
  double mass = 0, total = 0;
  for (const auto& f : json["flows"]) {
    mass += f["mass"].get<double>();
    total += f["mass"].get<double>() * f["cost"].get<double>();
  }
  EXPECT_NEAR(mass, 1.0, 1e-9);
  EXPECT_NEAR(total, json["distance"].get<double>(), 1e-6);
  // The table, and the RWMD's two directions.
  r = lcrwmd("explain" + common + " --doc t1 --method rwmd");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sets the distance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tennis"), std::string::npos) << r.out;
  // Bad input: a clear error and a non-zero exit.
  r = lcrwmd("explain" + common + " --doc nosuchdoc");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("nosuchdoc"), std::string::npos) << r.err;
  r = lcrwmd("explain" + common + " --doc s1 --method wcd");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("wcd"), std::string::npos) << r.err;
  const auto unknown = test::write_file("cli_explain_unknown.tsv", "q9\t\tzebra\n");
  r = lcrwmd("explain --index " + index + " --queries " + unknown + " --doc s1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("no query with a known word"), std::string::npos) << r.err;
}

// `lcrwmd embeddings` indexes an embeddings file once; building from it gives the same index
// bytes, and searching with it the same results, as the file it came from.
TEST_F(Cli, IndexedEmbeddingsGiveTheSameIndexAndResults) {
  const auto indexed = tmp("cli_emb.lce");
  CliRun r = lcrwmd("embeddings --input " + emb + " --output " + indexed);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto again = tmp("cli_again.idx");
  r = lcrwmd("build --embeddings " + indexed + " --docs " + docs + " --stopwords " + stop +
             " --output " + again);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(again), slurp(index));
  const auto q = test::write_file("cli_qi.tsv", "q\t\ttennis soccer\n");
  const CliRun a = lcrwmd("search --index " + index + " --queries " + q + " --embeddings " + emb);
  const CliRun b =
      lcrwmd("search --index " + index + " --queries " + q + " --embeddings " + indexed);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(Cli, InfoJson) {
  const CliRun r = lcrwmd("info --index " + index + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["path"], index);
  EXPECT_EQ(j["n_docs"], 3);
  EXPECT_EQ(j["vocab_size"], 7);
  EXPECT_EQ(j["dim"], 3);
  EXPECT_EQ(j["nnz"], 7);
  // How it was built.
  EXPECT_EQ(j["stopwords"], (std::vector<std::string>{"and", "of", "the"}));
  EXPECT_EQ(j["tokenizer_version"], 1);
  EXPECT_EQ(j["weighting"], "tf");
  EXPECT_EQ(j["has_text"], true);
  EXPECT_GT(j["text_bytes"].get<std::size_t>(), 0u);
  EXPECT_EQ(j["embeddings_fingerprint"].get<std::string>().size(), 16u);
  // A query of the mean length (7 / 3 words: 2), as the batch planner counts it.
  EXPECT_EQ(j["query_bytes_one_sided"], 4 * (3 + 7));
  EXPECT_EQ(j["query_bytes_symmetric"], 4 * (3 + 7 + 7 * 2));
  const CliRun table = lcrwmd("info --index " + index);
  EXPECT_NE(table.out.find("stop words   3: and, of, the"), std::string::npos) << table.out;
}

// docs/methods.md holds what `lcrwmd methods --format markdown` prints; the other formats list
// the same methods.
TEST(CliMethods, TheDocsTableIsTheCommandsOutput) {
  const CliRun md = lcrwmd("methods --format markdown");
  ASSERT_EQ(md.code, 0) << md.err;
  const std::string doc = slurp(fs::path(LCRWMD_SOURCE_DIR) / "docs" / "methods.md");
  const std::string open = "<!-- lcrwmd methods --format markdown -->\n", close = "<!-- end -->";
  const std::size_t a = doc.find(open), b = doc.find(close);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(doc.substr(a + open.size(), b - a - open.size()), md.out)
      << "regenerate docs/methods.md's table with `lcrwmd methods --format markdown`";
  const CliRun js = lcrwmd("methods --format json");
  ASSERT_EQ(js.code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  ASSERT_EQ(j.size(), methods().size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    EXPECT_EQ(j[i]["name"], methods()[i].name);
    EXPECT_EQ(j[i]["one_sided"], methods()[i].one_sided);
  }
}

TEST_F(Cli, OneSidedIsRefusedWhereTheMethodHasNoSuchForm) {
  for (const std::string m : {"wcd", "wmd"}) {
    const CliRun r = lcrwmd("search --index " + index + " --queries " + docs + " --method " + m +
                            " --one-sided");
    EXPECT_EQ(r.code, 1) << m;
    EXPECT_NE(r.err.find("--one-sided: " + m + " has no one-sided form"), std::string::npos)
        << r.err;
  }
  const CliRun r =
      lcrwmd("explain --index " + index + " --queries " + docs + " --doc s1 --method wcd");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("wcd"), std::string::npos) << r.err;
}

TEST(CliSynth, WritesIndexQueriesAndSourceFiles) {
  const auto idx = tmp("syn.idx"), q = tmp("syn_q.tsv"), e = tmp("syn.vec"), d = tmp("syn.tsv");
  CliRun r = lcrwmd("synth --docs 300 --vocab 400 --words-per-doc 12 --dim 8 --seed 5 --output " +
                    idx + " --queries 4 --queries-output " + q + " --embeddings-output " + e +
                    " --docs-output " + d);
  ASSERT_EQ(r.code, 0) << r.err;
  r = lcrwmd("info --index " + idx + " --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["n_docs"], 300) << r.out;
  r = lcrwmd("search --index " + idx + " --queries " + q + " --k 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 12);
  EXPECT_NE(r.err.find("0 with no vector"), std::string::npos) << r.err;
  // The written embeddings and documents rebuild the same index shape.
  const auto rebuilt = tmp("syn2.idx");
  r = lcrwmd("build --embeddings " + e + " --docs " + d + " --output " + rebuilt);
  ASSERT_EQ(r.code, 0) << r.err;
  const CliRun a = lcrwmd("info --index " + idx + " --json");
  const CliRun b = lcrwmd("info --index " + rebuilt + " --json");
  for (const char* f : {"nnz", "vocab_size", "n_docs"})
    EXPECT_EQ(nlohmann::json::parse(a.out)[f], nlohmann::json::parse(b.out)[f]) << f;
  // Same seed, same index.
  const auto again = tmp("syn3.idx");
  ASSERT_EQ(
      lcrwmd("synth --docs 300 --vocab 400 --words-per-doc 12 --dim 8 --seed 5 --output " + again)
          .code,
      0);
  EXPECT_EQ(slurp(again), slurp(idx));
}

// ---- SIMD levels: the same bytes whichever level runs (src/cpu/simd.h) ------------------

TEST(CliSimd, EveryLevelGivesTheSameBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string build = "build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                            "/train.tsv --stopwords " + demo + "/stop_words.txt --output ";
  const std::string common = " --queries " + demo + "/queries.tsv --stopwords " + demo +
                             "/stop_words.txt --embeddings " + demo + "/embeddings.bin --k 9";
  // The index of each level (its stored norms come from the kernels too), then every method.
  std::map<std::string, std::string> first;
  for (const std::string level : {"", "scalar", "avx2", "avx512"}) {
    const std::string env = level.empty() ? "" : "LCRWMD_SIMD=" + level + " ";
    const std::string index = tmp("simd" + level + ".idx");
    CliRun r = lcrwmd_via(env + LCRWMD_CLI + " " + build + index);
    ASSERT_EQ(r.code, 0) << r.err;
    if (!level.empty()) {
      EXPECT_EQ(slurp(index), slurp(tmp("simd.idx"))) << level;
    }
    for (const std::string method :
         {"lc-rwmd", "lc-rwmd --one-sided", "lc-rwmd --batch 4", "rwmd", "wcd", "wmd"}) {
      r = lcrwmd_via(env + LCRWMD_CLI + " search --index " + index + common + " --method " +
                     method);
      ASSERT_EQ(r.code, 0) << r.err;
      if (level.empty())
        first[method] = r.out;
      else
        EXPECT_EQ(r.out, first[method]) << method << " at LCRWMD_SIMD=" << level;
    }
  }
  const CliRun scalar = lcrwmd_via("LCRWMD_SIMD=scalar " + std::string(LCRWMD_CLI) + " devices");
  EXPECT_EQ(scalar.out.rfind("cpu\tscalar kernels\t", 0), 0u) << scalar.out;
  const CliRun bad = lcrwmd_via("LCRWMD_SIMD=sse9 " + std::string(LCRWMD_CLI) + " search --index " +
                                tmp("simd.idx") + common);
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("LCRWMD_SIMD=sse9"), std::string::npos) << bad.err;
}

// ---- phase-1 precisions: the same bytes whichever precision, oneDNN kernel and SIMD level -

TEST(CliPrecision, EveryPrecisionGivesTheSameBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string index = tmp("precision.idx");
  ASSERT_EQ(lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                   "/train.tsv --stopwords " + demo + "/stop_words.txt --output " + index)
                .code,
            0);
  const std::string common = " --index " + index + " --queries " + demo +
                             "/queries.tsv --stopwords " + demo + "/stop_words.txt --embeddings " +
                             demo + "/embeddings.bin";
  const std::vector<std::string> runs = {"search --k 9 --method lc-rwmd",
                                         "search --k 9 --method lc-rwmd --one-sided --batch 3",
                                         "search --k 9 --method act --act-steps 2",
                                         "search --k 9 --method ict --one-sided",
                                         "search --k 5 --method wmd",
                                         "pairwise --method lc-rwmd --output "};
  // The f32 baseline of each run: its stdout, or for pairwise the .npy file.
  const auto output = [&](const std::string& env, const std::string& run,
                          const std::string& precision, CliRun& r) {
    const bool npy = run.rfind("pairwise", 0) == 0;
    const std::string file = tmp("precision.npy");
    r = lcrwmd_via(env + LCRWMD_CLI + " " + run + (npy ? file : "") + common + " --precision " +
                   precision);
    return npy ? slurp(file) : r.out;
  };
  std::map<std::string, std::string> want;
  for (const std::string& run : runs) {
    CliRun r;
    want[run] = output("", run, "f32", r);
    ASSERT_EQ(r.code, 0) << run << ": " << r.err;
    ASSERT_FALSE(want[run].empty()) << run;
  }
  std::size_t compared = 0;
  // oneDNN's kernels capped below AMX (VNNI, AVX-512 BF16), and our SIMD levels.
  for (const std::string env :
       {"", "DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI ", "DNNL_MAX_CPU_ISA=AVX512_CORE_BF16 ",
        "LCRWMD_SIMD=scalar ", "LCRWMD_SIMD=avx2 "})
    for (const std::string precision : {"auto", "f32", "bf16", "int8"})
      for (const std::string& run : runs) {
        CliRun r;
        const std::string got = output(env, run, precision, r);
        if (r.code != 0 && r.err.find("which this CPU lacks") != std::string::npos) continue;
        ASSERT_EQ(r.code, 0) << env << run << " --precision " << precision << ": " << r.err;
        EXPECT_EQ(got, want[run]) << env << run << " --precision " << precision;
        ++compared;
      }
  EXPECT_GE(compared, 5 * 2 * runs.size());  // every environment ran f32 and auto at least
  // A precision the CPU lacks (oneDNN capped at AVX2): a clear error naming what is missing.
  const CliRun lacking = lcrwmd_via("DNNL_MAX_CPU_ISA=AVX2 " + std::string(LCRWMD_CLI) + " search" +
                                    common + " --precision int8");
  EXPECT_NE(lacking.code, 0);
  EXPECT_NE(lacking.err.find("AVX512_VNNI"), std::string::npos) << lacking.err;
  EXPECT_TRUE(lacking.out.empty());
  // devices names what auto takes; the search report counts the recomputed distances.
  const CliRun devices = lcrwmd("devices");
  EXPECT_NE(devices.out.find("phase 1\tauto: "), std::string::npos) << devices.out;
  CliRun r;
  output("", runs[0], "auto", r);
  EXPECT_NE(r.err.find("word distances recomputed per (vocabulary word, query)"), std::string::npos)
      << r.err;
}

// ---- mpirun: the same bytes as one process, and a failing rank stops the job -----------

#ifdef LCRWMD_MPIRUN
// mpirun on this machine; root may run it (CI containers do), ranks may outnumber cores.
CliRun mpirun(const std::string& ranks_and_args) {
  return lcrwmd_via("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 " +
                    std::string(LCRWMD_MPIRUN) + " --oversubscribe " + ranks_and_args);
}

class Mpi : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
    index = tmp("mpi_demo.idx");
    common = " --index " + index + " --queries " + demo + "/queries.tsv --stopwords " + demo +
             "/stop_words.txt";
    const CliRun r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                            "/train.tsv --stopwords " + demo + "/stop_words.txt --output " + index);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  std::string index, common;
};

TEST_F(Mpi, OneTwoThreeRanksGiveTheSameBytes) {
  for (const std::string method : {"lc-rwmd", "lc-rwmd --one-sided", "wmd", "wcd"}) {
    const std::string args = "search" + common + " --k 7 --method " + method;
    const CliRun one = lcrwmd(args);
    ASSERT_EQ(one.code, 0) << one.err;
    ASSERT_FALSE(one.out.empty());
    for (int np : {1, 2, 3})
      for (const char* layout : {"docs", "queries"}) {
        const CliRun r = mpirun("-np " + std::to_string(np) + " " + LCRWMD_CLI + " " + args +
                                " --distribute " + layout);
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.out, one.out) << method << ", " << np << " ranks, " << layout;
      }
  }
  // pairwise: every rank writes its queries' rows into rank 0's file.
  ASSERT_EQ(lcrwmd("pairwise" + common + " --output " + tmp("p1.npy")).code, 0);
  for (int np : {2, 3}) {
    const std::string out = tmp(test::numbered('p', static_cast<std::size_t>(np)) + ".npy");
    const CliRun r = mpirun("-np " + std::to_string(np) + " " + LCRWMD_CLI + " pairwise" + common +
                            " --output " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(out), slurp(tmp("p1.npy"))) << np << " ranks";
  }
  // eval: the same table (but for the time it took).
  auto untimed = [](std::string s) {
    const auto open = s.find(" ("), close = s.find(" s)");
    if (open != std::string::npos && close != std::string::npos) s.erase(open, close + 3 - open);
    return s;
  };
  const CliRun one = lcrwmd("eval knn" + common + " --k 1,3,5");
  ASSERT_EQ(one.code, 0) << one.err;
  const CliRun three =
      mpirun(std::string("-np 3 ") + LCRWMD_CLI + " eval knn" + common + " --k 1,3,5");
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(untimed(three.out), untimed(one.out));
}

// A shard per rank, each rank mapping only its own: the bytes of the same shards in one process.
TEST_F(Mpi, AShardPerRankGivesTheCollectionsBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string base = tmp("mpi_shards.idx");
  const CliRun built =
      lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
             "/train.tsv --stopwords " + demo + "/stop_words.txt --shards 3 " + "--output " + base);
  ASSERT_EQ(built.code, 0) << built.err;
  std::string shards;
  for (int i = 0; i < 3; ++i)
    shards += " --index " + tmp("mpi_shards." + std::to_string(i) + ".idx");
  const std::string args =
      "search" + shards + " --queries " + demo + "/queries.tsv --k 7 --with-text";
  for (const std::string method : {"lc-rwmd", "wmd", "act --one-sided"}) {
    const CliRun one = lcrwmd(args + " --method " + method);
    ASSERT_EQ(one.code, 0) << one.err;
    ASSERT_FALSE(one.out.empty());
    const CliRun three = mpirun("-np 3 " + std::string(LCRWMD_CLI) + " " + args + " --method " +
                                method + " --threads 1");
    ASSERT_EQ(three.code, 0) << three.err;
    EXPECT_EQ(three.out, one.out) << method;
  }
  const CliRun wrong = mpirun("-np 2 " + std::string(LCRWMD_CLI) + " " + args);
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("give one shard per rank"), std::string::npos) << wrong.err;
}

TEST_F(Mpi, AFailingRankStopsTheJobWithAClearMessage) {
  // Rank 1 is given an index that does not exist (mpirun's MPMD syntax): it fails loading its
  // shard while rank 0 succeeds. The job must end, not hang, with rank 0 saying why.
  const auto out = tmp("mpi_fail.tsv");
  const std::string tail =
      " --queries " + std::string(LCRWMD_SOURCE_DIR) + "/data/demo/queries.tsv --output " + out;
  const CliRun r =
      mpirun("-np 1 " + std::string(LCRWMD_CLI) + " search --index " + index + tail + " : -np 1 " +
             LCRWMD_CLI + " search --index " + tmp("missing.idx") + tail);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, 124) << "the job hung until timeout";
  EXPECT_NE(r.err.find("rank 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.idx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}
#else
TEST(Mpi, Skipped) { GTEST_SKIP() << "built without MPI: distributed commands not tested"; }
#endif

}  // namespace
}  // namespace lcrwmd
