#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/text.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

using test::write_file;

std::string binary_embeddings(const std::vector<std::pair<std::string, std::vector<float>>>& rows,
                              std::size_t dim, std::size_t header_count) {
  std::string s = std::to_string(header_count) + " " + std::to_string(dim) + "\n";
  for (const auto& [w, v] : rows) {
    s += w + " ";
    s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    s += "\n";
  }
  return s;
}

void expect_error(const std::string& path, const std::string& fragment) {
  try {
    Embeddings::load(path);
    FAIL() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Embeddings, Word2VecBinary) {
  const auto p =
      write_file("b.bin", binary_embeddings({{"a", {1, 2, 3}}, {"b", {-1, 0.5f, 7}}}, 3, 2));
  const Embeddings e = Embeddings::load(p);
  EXPECT_EQ(e.format(), "word2vec-binary");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e.dim(), 3u);
  EXPECT_EQ(e.vector(*e.find("b"))[2], 7.0f);
  EXPECT_FALSE(e.find("c"));
}

TEST(Embeddings, TextWithAndWithoutHeader) {
  const auto with = write_file("t1.vec", "2 3\nthe 0.1 0.2 0.3 \nof -1 2e-3 4\n");
  const auto without = write_file("t2.txt", "the 0.1 0.2 0.3\r\nof -1 2e-3 4\r\n");
  for (const auto& p : {with, without}) {
    const Embeddings e = Embeddings::load(p);
    ASSERT_EQ(e.size(), 2u) << p;
    EXPECT_EQ(e.dim(), 3u);
    EXPECT_FLOAT_EQ(e.vector(1)[1], 2e-3f);
  }
  EXPECT_EQ(Embeddings::load(with).format(), "text");
  EXPECT_EQ(Embeddings::load(without).format(), "text-no-header");
}

TEST(Embeddings, DuplicateWordsFirstWins) {
  const auto p = write_file("dup.txt", "a 1 1\nb 2 2\na 3 3\n");
  const Embeddings e = Embeddings::load(p);
  EXPECT_EQ(e.size(), 2u);
  EXPECT_EQ(e.duplicates(), 1u);
  EXPECT_EQ(e.vector(*e.find("a"))[0], 1.0f);
}

TEST(Embeddings, RejectsBadInput) {
  expect_error(write_file("empty.txt", ""), "empty");
  expect_error(write_file("dim.txt", "a 1 2 3\nb 1 2\n"), ":2: wrong dimension");
  expect_error(write_file("hdrdim.vec", "2 3\na 1 2 3\nb 1 2 3 4\n"), ":3: wrong dimension");
  expect_error(write_file("nonnum.txt", "a 1 2\nb 1 x2\n"), ":2: non-numeric");
  expect_error(write_file("nan.txt", "a 1 nan\n"), ":1: NaN or infinite");
  expect_error(write_file("inf.txt", "a 1 2\nb inf 2\n"), ":2: NaN or infinite");
  expect_error(write_file("big.txt", "a 1 1e999\n"), "out of float range");
  expect_error(write_file("huge.txt", "a 1 2\nb 3e38 1\n"), ":2: vector of word 'b' too large");
  expect_error(write_file("count.vec", "3 2\na 1 2\nb 1 2\n"), "truncated");
  std::string bin = binary_embeddings({{"a", {1, 2, 3}}, {"b", {4, 5, 6}}}, 3, 2);
  expect_error(write_file("trunc.bin", bin.substr(0, bin.size() - 6)), "entry 2");
  expect_error(write_file("short.bin", binary_embeddings({{"a", {1, 2, 3}}}, 3, 2)), "truncated");
  // Headers announcing far more than the file holds: errors, not huge allocations.
  expect_error(write_file("many.bin", binary_embeddings({{"a", {1, 2, 3}}}, 3, 4000000000)),
               "truncated");
  expect_error(write_file("wide.bin", "1 99999999999\na \x01\x02\n"), "dimension 99999999999");
  expect_error(write_file("wide.vec", "1 99999999999\na 1 2\n"), "wrong dimension");
  expect_error(write_file("none.bin", "0 9510972583285944066\n \x1b\xf0"), "unexpected bytes");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_error(write_file("nan.bin", binary_embeddings({{"a", {1, nan, 3}}}, 3, 1)),
               "entry 1 (word 'a'): NaN");
  expect_error("/nonexistent/emb.bin", "cannot open");
}

TEST(Tokenizer, ExactRules) {
  EXPECT_EQ(tokenize("Hello, WORLD! it's 'quoted' ''x'' 25-year-old caf\xc3\xa9 a_b"),
            (std::vector<std::string>{"hello", "world", "it's", "quoted", "x", "25", "year", "old",
                                      "caf\xc3\xa9", "a", "b"}));
  EXPECT_TRUE(tokenize("  '' ... \t").empty());
  EXPECT_EQ(tokenize("O'NEIL's"), (std::vector<std::string>{"o'neil's"}));
}

TEST(StopWords, MatchTokens) {
  const auto p = write_file("stop.txt", "The\n\nDon't\nof\n");
  const StopWords s = StopWords::load(p);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_TRUE(s.contains("the"));
  EXPECT_TRUE(s.contains("don't"));
  EXPECT_FALSE(s.contains("The"));
}

TEST(Tsv, ReadsPlainAndGzip) {
  const std::string content = "a\tx\tsome text\n\nb\t\tmore\ttext\r\n";
  const auto plain = write_file("docs.tsv", content);
  const auto gz = (test::temp_dir() / "docs.tsv.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
  for (const auto& p : {plain, gz}) {
    const auto docs = read_tsv(p);
    ASSERT_EQ(docs.size(), 2u) << p;
    EXPECT_EQ(docs[0].label, "x");
    EXPECT_EQ(docs[1].label, "");
    EXPECT_EQ(docs[1].text, "more\ttext");
    EXPECT_EQ(docs[1].line, 3u);
  }
}

TEST(Tsv, RejectsMalformedLines) {
  for (const auto& [name, content, where] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"two.tsv", "a\tb\tc\nno tabs here\n", ":2: malformed"},
           {"one.tsv", "a\tb\n", ":1: malformed"},
           {"noid.tsv", "a\tb\tc\n\tl\ttext\n", ":2: empty document id"}}) {
    const auto p = write_file(name, content);
    try {
      read_tsv(p);
      FAIL() << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p + where), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_tsv("/nonexistent.tsv"), Error);
}

}  // namespace
}  // namespace lcrwmd
