// What the commands report: eval's tables and JSON (and WMD through them), explain's flows,
// info, the methods' descriptions, and the options a method refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "app/cli_run.h"
#include "lcrwmd/method.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

using namespace test;
namespace fs = std::filesystem;

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
      {base + " --one-sided", "--one-sided: wmd has no document-to-query form"},
      {base + " --direction query-to-document", "--direction: wmd has no query-to-document form"},
      {"search --index " + index + " --queries " + q + " --one-sided --direction query-to-document",
       "--one-sided is --direction document-to-query"},
      {"search --index " + index + " --queries " + q + " --k 0", "--k: must be at least 1"}};
  for (const auto& [args, says] : bad) {
    const CliRun r = lcrwmd(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
  }
}

// Backends: auto runs wherever it is; cuda without a GPU is a clear error with no output file;
// wmd is CPU-only; both backends give the same neighbours where a GPU is present.

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
  EXPECT_EQ(j["tokenizer_version"], kTokenizerVersion);
  EXPECT_EQ(j["weighting"], "tf");
  EXPECT_EQ(j["has_text"], true);
  EXPECT_GT(j["text_bytes"].get<std::size_t>(), 0u);
  EXPECT_EQ(j["embeddings_fingerprint"].get<std::string>().size(), 16u);
  // A query of the mean length (7 / 3 words: 2), as the batch planner counts it.
  EXPECT_EQ(j["query_bytes_one_sided"], 4 * 3 + 16 * 7);
  EXPECT_EQ(j["query_bytes_symmetric"], 4 * 3 + 16 * 7 + 4 * 7 * 2);
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
    EXPECT_EQ(j[i]["name"], methods()[i].name());
    EXPECT_EQ(j[i]["document_to_query"], methods()[i]->document_to_query);
    EXPECT_EQ(j[i]["query_to_document"], methods()[i]->query_to_document);
    const auto& parameters = methods()[i]->parameters;
    ASSERT_EQ(j[i]["parameters"].size(), parameters.size());
    for (std::size_t p = 0; p < parameters.size(); ++p) {
      EXPECT_EQ(j[i]["parameters"][p]["name"], parameters[p].name);
      EXPECT_EQ(j[i]["parameters"][p]["flag"], flag(parameters[p]));
      EXPECT_EQ(j[i]["parameters"][p]["default"].get<double>(), parameters[p].default_value);
    }
  }
}

TEST_F(Cli, OneSidedIsRefusedWhereTheMethodHasNoSuchForm) {
  for (const std::string m : {"wcd", "wmd"}) {
    const CliRun r = lcrwmd("search --index " + index + " --queries " + docs + " --method " + m +
                            " --one-sided");
    EXPECT_EQ(r.code, 1) << m;
    EXPECT_NE(r.err.find("--one-sided: " + m + " has no document-to-query form"), std::string::npos)
        << r.err;
  }
  const CliRun r =
      lcrwmd("explain --index " + index + " --queries " + docs + " --doc s1 --method wcd");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("wcd"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lcrwmd
