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

#include "app/cli_run.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/method.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

using namespace test;
namespace fs = std::filesystem;

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
  // int8 is the CPU's: asked of the GPU, an error, not a silent f32, with or without a device.
  fs::remove(out);
  r = lcrwmd(base + " --backend cuda --precision int8 --output " + out);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("precision int8 is the CPU backend's"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // bf16 runs on the GPU (where it has BF16 tensor cores), with the CPU's results.
  r = lcrwmd(base + " --backend cuda --precision bf16 --output " + out);
  if (gpu_device_count() == 0) {
    EXPECT_NE(r.code, 0);
    EXPECT_FALSE(fs::exists(out));
  } else if (gpu_device(0).compute_major >= 8) {
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("phase 1 in bf16"), std::string::npos) << r.err;
    EXPECT_FALSE(slurp(out).empty());
  }
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

// search --like: documents of the index as the queries, themselves left out; the neighbours
// their texts as queries find, and the same over the index's shards.
TEST(CliLike, MoreLikeADocumentIsItsTextsNeighboursWithoutItself) {
  const std::string demo = demo_dir(), whole = demo_index("like.idx");
  const CliRun shards = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                               "/train.tsv --stopwords " + demo + "/stop_words.txt --shards 3 " +
                               "--output " + tmp("like_shards.idx"));
  ASSERT_EQ(shards.code, 0) << shards.err;
  std::string parts;  // in order: like_shards.0.idx, .1, .2
  for (int i = 0; i < 3; ++i)
    parts += " --index " + tmp("like_shards." + std::to_string(i) + ".idx");
  // The texts of documents 5 and 60 of train.tsv, as queries named by their ids.
  std::ifstream in(demo + "/train.tsv");
  std::string line, queries, a, b;
  for (int i = 0; std::getline(in, line); ++i)
    if (i == 5 || i == 60) {
      queries += line + "\n";
      (i == 5 ? a : b) = line.substr(0, line.find('\t'));
    }
  const CliRun text = lcrwmd("search --index " + whole + " --queries " +
                             test::write_file("like_q.tsv", queries) + " --k 5");
  ASSERT_EQ(text.code, 0) << text.err;
  std::string want;  // each query's own document dropped, four left
  std::istringstream rows(text.out);
  std::map<std::string, int> rank;
  while (std::getline(rows, line)) {
    std::istringstream f(line);
    std::string q, r, doc, d;
    std::getline(f, q, '\t'), std::getline(f, r, '\t'), std::getline(f, doc, '\t'),
        std::getline(f, d);
    if (doc == q || rank[q] == 4) continue;
    want += q + "\t" + std::to_string(++rank[q]) + "\t" + doc + "\t" + d + "\n";
  }
  const CliRun like =
      lcrwmd("search --index " + whole + " --like " + a + " --like " + b + " --k 4");
  ASSERT_EQ(like.code, 0) << like.err;
  EXPECT_EQ(like.out, want);
  EXPECT_EQ(want.find(a + "\t1\t" + a), std::string::npos);
  const CliRun sharded = lcrwmd("search" + parts + " --like " + a + " --like " + b + " --k 4");
  ASSERT_EQ(sharded.code, 0) << sharded.err;
  EXPECT_EQ(sharded.out, want);
  const CliRun none = lcrwmd("search --index " + whole + " --like nosuchdoc");
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.err.find("no document with id 'nosuchdoc'"), std::string::npos) << none.err;
  const CliRun both = lcrwmd("search --index " + whole + " --like " + a + " --queries x.tsv");
  EXPECT_NE(both.code, 0);
}

// search --query: typed words, each a query named by its words, ranked by the method for typed
// text (bm25) where none is named; a direction bm25 lacks takes the documents' method
// (lc-rwmd), as the service does. The same rows as the words given in a --queries file with the
// method named.
TEST(CliQuery, TypedWordsTakeTheTextMethodAndAreNamedByTheirWords) {
  const std::string index = demo_index("typed.idx");
  const std::string typed = " --query 'federer wimbledon' --query 'england batsmen wicket'";
  const std::string file =
      " --queries " + test::write_file("typed_q.tsv",
                                       "federer wimbledon\t\tfederer wimbledon\n"
                                       "england batsmen wicket\t\tengland batsmen wicket\n");
  for (const auto& [asked, named] :
       {std::pair<std::string, std::string>{"", " --method bm25"},
        {" --direction symmetric", " --method lc-rwmd --direction symmetric"},
        {" --method lc-rwmd --direction query-to-document",
         " --method lc-rwmd --direction query-to-document"}}) {
    const CliRun q = lcrwmd("search --index " + index + typed + asked + " --k 4");
    ASSERT_EQ(q.code, 0) << asked << q.err;
    const CliRun f = lcrwmd("search --index " + index + file + named + " --k 4");
    ASSERT_EQ(f.code, 0) << named << f.err;
    EXPECT_EQ(q.out, f.out) << asked;
    EXPECT_EQ(q.out.rfind("federer wimbledon\t1\t", 0), 0u) << q.out;
  }
  const CliRun plain = lcrwmd("search --index " + index + file + " --k 4");
  const CliRun bm25 = lcrwmd("search --index " + index + file + " --method bm25 --k 4");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out, bm25.out) << "documents as queries keep the symmetric lc-rwmd";
  const CliRun both = lcrwmd("search --index " + index + typed + file);
  EXPECT_NE(both.code, 0);
  const CliRun neither = lcrwmd("search --index " + index);
  EXPECT_NE(neither.code, 0);
  EXPECT_NE(neither.err.find("--query (typed words)"), std::string::npos) << neither.err;
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

}  // namespace
}  // namespace lcrwmd
