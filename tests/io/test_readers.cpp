#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>

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

// Embeddings in words and vectors, for comparing loads.
std::vector<std::pair<std::string, std::vector<float>>> rows_of(const Embeddings& e) {
  std::vector<std::pair<std::string, std::vector<float>>> out;
  for (std::size_t i = 0; i < e.size(); ++i)
    out.push_back({e.word(i), {e.vector(i), e.vector(i) + e.dim()}});
  return out;
}

// A load of only some words keeps those, in the file's order, with the vectors a full load
// gives, from every format, the indexed one included; the others' entries go unparsed.
TEST(Embeddings, OnlySomeWordsAndTheIndexedFormat) {
  const auto text = write_file("some.txt", "a 1 2\nb 3 4\nc 5 6\nb 7 8\nd 9 10\n");
  const auto bin = write_file(
      "some.bin",
      binary_embeddings(
          {{"a", {1, 2}}, {"b", {3, 4}}, {"c", {5, 6}}, {"b", {7, 8}}, {"d", {9, 10}}}, 2, 5));
  const std::string indexed = (test::temp_dir() / "some.lce").string();
  EXPECT_EQ(Embeddings::write_indexed(text, indexed), 4u);  // b's copy skipped
  const WordSet only = {"d", "b", "zzz"};
  const Embeddings full = Embeddings::load(text);
  for (const std::string& p : {text, bin, indexed}) {
    const Embeddings all = Embeddings::load(p);
    EXPECT_EQ(rows_of(all), rows_of(full)) << p;
    const Embeddings some = Embeddings::load(p, &only);
    EXPECT_EQ(rows_of(some), (std::vector<std::pair<std::string, std::vector<float>>>{
                                 {"b", {3, 4}}, {"d", {9, 10}}}))
        << p;
    EXPECT_EQ(some.file_words(), p == indexed ? 4u : 5u) << p;
  }
  EXPECT_EQ(Embeddings::load(indexed).format(), "indexed");
  // A line of a word not asked for is checked for its shape, not its values; asked for, it is
  // checked for both.
  const auto damaged = write_file("damaged.txt", "a 1 2\nb x y\nc 5 6\n");
  const WordSet ac = {"a", "c"};
  EXPECT_EQ(Embeddings::load(damaged, &ac).size(), 2u);
  expect_error(damaged, ":2: non-numeric");
  const auto short_line = write_file("short.txt", "a 1 2\nb 3\nc 5 6\n");
  try {
    Embeddings::load(short_line, &ac);
    ADD_FAILURE() << "a line of one value accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(short_line + ":2: wrong dimension"), std::string::npos)
        << e.what();
  }
  // Indexed files: a truncated file or another version is an error naming it.
  std::string bytes = test::read_file(indexed);
  expect_error(write_file("cut.lce", bytes.substr(0, bytes.size() - 4)),
               "not a valid indexed embeddings file");
  bytes[8] = 9;  // the version
  const auto version = write_file("version.lce", bytes);
  expect_error(version, "version 9");
  // Refused files leave nothing open.
  const auto open_files = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator());
  };
  const auto before = open_files();
  for (int i = 0; i < 100; ++i) EXPECT_THROW(Embeddings::load(version), Error);
  EXPECT_EQ(open_files(), before);
  // A text header announcing more words than the file can hold reserves no more than it holds.
  expect_error(write_file("many.vec", "12888888888888888812 1\nw0 3\nw1 0\n"), "header announces");
}

TEST(Tokenizer, VersionOneExactRules) {
  EXPECT_EQ(tokenize("Hello, WORLD! it's 'quoted' ''x'' 25-year-old caf\xc3\xa9 a_b", 1),
            (std::vector<std::string>{"hello", "world", "it's", "quoted", "x", "25", "year", "old",
                                      "caf\xc3\xa9", "a", "b"}));
  EXPECT_TRUE(tokenize("  '' ... \t", 1).empty());
  EXPECT_EQ(tokenize("O'NEIL's", 1), (std::vector<std::string>{"o'neil's"}));
  // Any byte >= 0x80 is a letter to it: curly quotes stick to their words.
  EXPECT_EQ(tokenize("Federer\u2019s \u201Ccomeback\u201D", 1),
            (std::vector<std::string>{"federer\u2019s", "\u201Ccomeback\u201D"}));
}

// Version 2 on text as people write it: each row, a text and the tokens it must give.
TEST(Tokenizer, VersionTwoOnRealText) {
  using V = std::vector<std::string>;
  const std::pair<const char*, V> table[] = {
      // Curly and straight apostrophes and quotes read alike; possessives drop their 's.
      {"Federer\u2019s \u201Ccomeback\u201D", V{"federer", "comeback"}},
      {"Federer's comeback", V{"federer", "comeback"}},
      {"\u2018Federer\u2019s\u2019 players' O'NEIL's", V{"federer", "players", "o'neil"}},
      {"didn\u2019t didn't didn\u02BCt DON'T", V{"didn't", "didn't", "didn't", "don't"}},
      {"it's \u2018quoted\u2019 ''x'' '' 's", V{"it", "quoted", "x", "s"}},
      // Dashes, slashes and other punctuation separate; digits are letters.
      {"25-year-old \u2014 well\u2013known/a_b e-mail 3.14",
       V{"25", "year", "old", "well", "known", "a", "b", "e", "mail", "3", "14"}},
      // Case folding beyond ASCII, and NFKC: ligatures, full-width and composed forms.
      {"\u00DCber \u00FCber U\u0308BER STRA\u00DFE",
       V{"\u00FCber", "\u00FCber", "\u00FCber", "strasse"}},
      {"\uFB01nal \uFF26\uFF45\uFF44 \u2460 caf\u00E9 cafe\u0301",
       V{"final", "fed", "1", "caf\u00E9", "caf\u00E9"}},
      // Other scripts: their letters, case-folded.
      {"\u041C\u043E\u0441\u043A\u0432\u0430 \u0438 "
       "\u039A\u03B1\u03BB\u03B7\u03BC\u03AD\u03C1\u03B1",
       V{"\u043C\u043E\u0441\u043A\u0432\u0430", "\u0438",
         "\u03BA\u03B1\u03BB\u03B7\u03BC\u03AD\u03C1\u03B1"}},
      {"\u6771\u4EAC\u30BF\u30EF\u30FC\u3002\u5927\u962A",
       V{"\u6771\u4EAC\u30BF\u30EF\u30FC", "\u5927\u962A"}},
      // Symbols and emoji separate.
      {"price\u20AC10 \U0001F600smile #tag @user", V{"price", "10", "smile", "tag", "user"}},
      {"  '' ... \t", V{}},
  };
  for (const auto& [text, want] : table) EXPECT_EQ(tokenize(text), want) << text;
  EXPECT_EQ(tokenize("same"), tokenize("same", kTokenizerVersion));
  // Not UTF-8: an Error saying where.
  for (const char* bad : {"caf\xe9", "ok \xc3", "\xff\xfe",
                          "a\xed\xa0\x80"
                          "b"}) {
    try {
      tokenize(bad);
      ADD_FAILURE() << "read " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(tokenize("x", 3), Error);
  EXPECT_THROW(tokenize("x", 0), Error);
}

TEST(StopWords, MatchTokens) {
  const auto p = write_file("stop.txt", "The\n\nDon\u2019t\nof\n\u00DCber\n");
  const StopWords s = StopWords::load(p);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_TRUE(s.contains("the"));
  EXPECT_TRUE(s.contains("don't"));
  EXPECT_TRUE(s.contains("\u00FCber"));
  EXPECT_FALSE(s.contains("The"));
  const StopWords old = StopWords::load(p, 1);  // as an index of version 1 reads them
  EXPECT_TRUE(old.contains("don\u2019t"));
  EXPECT_TRUE(old.contains("\u00DCber"));
  EXPECT_THROW(StopWords::load(write_file("stop_bad.txt", "ok\nbad\xff\n")), Error);
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
