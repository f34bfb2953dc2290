#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string_view>

#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "test_util.h"
#include "util/id_slots.h"

namespace lcrwmd {
namespace {

Embeddings tiny_embeddings() {
  return Embeddings({"the", "cat", "sat", "mat", "dog", "unused"},
                    {1, 0, 0, 1, 1, 1, 0, 2, 0, 3, 3, 0, 5, 5, 5, 9, 9, 9}, 3);
}

std::vector<RawDocument> tiny_docs() {
  return {{"d1", "a", "The cat sat on the mat", 1},
          {"d2", "b", "zzz qqq", 2},
          {"d3", "a", "dog dog CAT", 3}};
}

TEST(IndexBuild, CompactsVocabularyAndWeights) {
  StopWords stop;
  stop.add("the");
  BuildOptions o;
  o.stopwords = &stop;
  TextReport r;
  const IndexData d = build_index_data(tiny_embeddings(), tiny_docs(), o, &r);
  // The index's rule, whatever the embeddings' order: most documents first, ties bytewise.
  EXPECT_EQ(d.vocab, (std::vector<std::string>{"cat", "dog", "mat", "sat"}));
  EXPECT_EQ(d.ids, (std::vector<std::string>{"d1", "d3"}));
  EXPECT_EQ(r.empty_documents, std::vector<std::string>{"d2"});
  EXPECT_EQ(r.stop_tokens, 2u);
  EXPECT_EQ(r.unknown_tokens, 3u);  // on, zzz, qqq
  EXPECT_EQ(r.unknown_distinct, 3u);
  ASSERT_EQ(d.indptr, (std::vector<std::uint64_t>{0, 3, 5}));
  EXPECT_EQ(d.indices, (std::vector<std::uint32_t>{0, 2, 3, 0, 1}));
  EXPECT_FLOAT_EQ(d.values[3], 1.0f / 3);
  EXPECT_FLOAT_EQ(d.values[4], 2.0f / 3);
  EXPECT_EQ(d.doc_freq, (std::vector<std::uint32_t>{2, 1, 1, 1}));
}

TEST(IndexBuild, TfIdfDownweightsCommonWords) {
  BuildOptions o;
  o.weighting = Weighting::tfidf;
  const IndexData d = build_index_data(tiny_embeddings(), tiny_docs(), o);
  // d3: cat (df 2) once, dog (df 1) twice.
  const double wc = idf(2, 2), wd = 2 * idf(2, 1);
  EXPECT_NEAR(d.values[d.indptr[1]], wc / (wc + wd), 1e-7);
  double sum = 0;
  for (std::uint64_t p = d.indptr[1]; p < d.indptr[2]; ++p) sum += d.values[p];
  EXPECT_NEAR(sum, 1.0, 1e-6);
}

TEST(IndexBuild, RejectsDuplicateIdsAndEmptyCorpus) {
  auto docs = tiny_docs();
  docs[2].id = "d1";
  EXPECT_THROW(build_index_data(tiny_embeddings(), docs, {}), Error);
  EXPECT_THROW(build_index_data(tiny_embeddings(), {{"x", "", "nothing known", 1}}, {}), Error);
}

// Documents are read in parallel blocks and taken in order: the same index bytes and report
// on one thread as on several, across blocks (awkward counts, empty documents, unknown words,
// stop words, repeated words), and the first bad document in order is the one named.
TEST(IndexBuild, TheSameBytesOnAnyNumberOfThreads) {
  std::vector<std::string> words;
  std::vector<float> vectors;
  for (int w = 0; w < 300; ++w) {
    words.push_back("w" + std::to_string(w));
    for (int k = 0; k < 4; ++k) vectors.push_back(static_cast<float>((w * 31 + k * 7) % 17));
  }
  const Embeddings emb(words, vectors, 4);
  StopWords stop;
  stop.add("w7");
  std::mt19937 rng(5);
  std::vector<RawDocument> docs;
  for (std::size_t i = 0; i < 9001; ++i) {
    std::string text;
    const std::size_t n = rng() % 12;
    for (std::size_t t = 0; t < n; ++t)
      text += (rng() % 9 == 0 ? "unknown" + std::to_string(rng() % 50)
                              : "w" + std::to_string(rng() % 300)) +
              " ";
    docs.push_back({"d" + std::to_string(i), "l" + std::to_string(i % 3), text, i + 1});
  }
  BuildOptions o;
  o.stopwords = &stop;
  const int threads = omp_get_max_threads();
  std::string bytes[2];
  TextReport report[2];
  for (const int t : {1, 4}) {
    omp_set_num_threads(t);
    const IndexData d = build_index_data(emb, docs, o, &report[t == 4]);
    bytes[t == 4] = Index::from_data(d).to_bytes();
    EXPECT_EQ(distinct_tokens(docs).size(), 300u + 50u) << t << " threads";
  }
  EXPECT_EQ(bytes[0], bytes[1]);
  EXPECT_EQ(report[0].empty_documents, report[1].empty_documents);
  EXPECT_FALSE(report[0].empty_documents.empty());
  EXPECT_EQ(report[0].unknown_distinct, report[1].unknown_distinct);
  EXPECT_EQ(report[0].unknown_distinct, 50u);
  EXPECT_EQ(report[0].unknown_tokens, report[1].unknown_tokens);
  EXPECT_EQ(report[0].stop_tokens, report[1].stop_tokens);
  EXPECT_EQ(report[0].tokens, report[1].tokens);
  // Text that is not UTF-8 in block 2 and an id repeated after it: the text is named.
  docs[6000].text = "w1 caf\xe9";
  docs[7000].id = docs[1].id;
  for (const int t : {1, 4}) {
    omp_set_num_threads(t);
    try {
      build_index_data(emb, docs, o);
      ADD_FAILURE() << "built";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'d6000' on line 6001"), std::string::npos) << e.what();
    }
  }
  omp_set_num_threads(threads);
}

// find_doc through the id table is a scan's answer: every id, ids it lacks (prefixes, longer
// ones, the empty id), in shard views of the index (their own numbering), at awkward sizes.
TEST(Index, FindsEveryDocumentByIdAsAScanWould) {
  for (const std::size_t n : {1, 2, 3, 7, 64, 1000}) {
    IndexData data = test::random_index(n, 12, 3, 4, static_cast<unsigned>(n));
    for (std::size_t i = 0; i < n; i += 3) data.ids[i] = "id-" + std::to_string(i * 7919 % 1009);
    const Index ix = Index::from_data(data);
    const auto scan = [](const Index& x, std::string_view id) -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < x.n_docs(); ++i)
        if (x.doc_id(i) == id) return i;
      return std::nullopt;
    };
    for (std::size_t i = 0; i < n; ++i) {
      const std::string id(ix.doc_id(i));
      EXPECT_EQ(ix.find_doc(id), scan(ix, id)) << id;
      EXPECT_EQ(ix.find_doc(id + "x"), std::nullopt);
      EXPECT_EQ(ix.find_doc(id.substr(0, id.size() - 1)), scan(ix, id.substr(0, id.size() - 1)));
    }
    EXPECT_EQ(ix.find_doc(""), std::nullopt);
    const Index part = ix.shard(n / 3, n);
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_EQ(part.find_doc(ix.doc_id(i)), scan(part, ix.doc_id(i))) << ix.doc_id(i);
  }
}

// The table itself: of an id given twice, the first document; an empty table finds nothing.
TEST(IdSlots, FindsTheFirstOfRepeatedIds) {
  const std::vector<std::string> ids = {"a", "b", "a", "c", "", "b"};
  const auto id = [&](std::size_t i) -> std::string_view { return ids[i]; };
  const IdSlots slots(ids.size(), id);
  EXPECT_EQ(slots.find("a", id), 0u);
  EXPECT_EQ(slots.find("b", id), 1u);
  EXPECT_EQ(slots.find("c", id), 3u);
  EXPECT_EQ(slots.find("", id), 4u);
  EXPECT_EQ(slots.find("d", id), std::nullopt);
  EXPECT_GE(slots.bytes(), 2 * ids.size() * sizeof(std::uint32_t));
  EXPECT_EQ(IdSlots().find("a", id), std::nullopt);
  EXPECT_EQ(IdSlots(0, id).find("a", id), std::nullopt);
}

TEST(IndexFile, RoundTripByMemoryMap) {
  const IndexData d = test::random_index(50, 40, 7, 9, 1);
  const std::string path = (test::temp_dir() / "rt.idx").string();
  Index::save(d, path);
  const Index ix = Index::load(path);
  ASSERT_EQ(ix.n_docs(), 50u);
  EXPECT_EQ(ix.vocab_size(), 40u);
  EXPECT_EQ(ix.dim(), 7u);
  EXPECT_EQ(ix.nnz(), d.indices.size());
  EXPECT_EQ(ix.file_bytes(), std::filesystem::file_size(path));
  for (std::size_t p = 0; p < d.indices.size(); ++p) {
    EXPECT_EQ(ix.indices()[p], d.indices[p]);
    EXPECT_EQ(ix.values()[p], d.values[p]);
  }
  EXPECT_EQ(ix.vector(13)[4], d.vectors[13 * 7 + 4]);
  EXPECT_EQ(ix.doc_id(49), "d49");
  EXPECT_EQ(ix.label(4), "c1");
  EXPECT_EQ(ix.word(39), "w39");
  EXPECT_EQ(*ix.find_word("w17"), 17u);
  EXPECT_FALSE(ix.find_word("nope"));
  // No temporary left beside the output.
  for (const auto& e : std::filesystem::directory_iterator(test::temp_dir()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(IndexFile, DetectsCorruptionAndTruncation) {
  const IndexData d = test::random_index(20, 30, 5, 6, 2);
  const std::string path = (test::temp_dir() / "bad.idx").string();
  Index::save(d, path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto expect_rejected = [&](const std::string& content, const std::string& fragment) {
    const std::string p = test::write_file("corrupt.idx", content);
    try {
      Index::load(p);
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  std::string flipped = bytes;
  flipped[bytes.size() - 100] ^= 0x10;
  expect_rejected(flipped, "payload checksum");
  std::string header = bytes;
  header[20] ^= 1;
  expect_rejected(header, "header checksum");
  expect_rejected(bytes.substr(0, bytes.size() - 1), "truncated");
  expect_rejected("not an index at all", "file too small");
  expect_rejected(std::string(600, 'x'), "magic");
}

TEST(Queries, UnknownWordsUseExtraEmbeddingsOrAreDropped) {
  StopWords stop;
  stop.add("the");
  BuildOptions o;
  o.stopwords = &stop;
  const Embeddings emb = tiny_embeddings();
  const Index ix = Index::from_data(build_index_data(emb, tiny_docs(), o));
  const std::vector<RawDocument> q = {{"q1", "", "the cat and the unused", 1},
                                      {"q2", "", "nothing here", 2}};
  // The index's own stop words apply, unasked; words it lacks are counted apart from words
  // with no vector anywhere.
  TextReport r;
  const QuerySet dropped = make_query_set(ix, q, {}, &r);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(r.empty_documents, std::vector<std::string>{"q2"});
  EXPECT_EQ(dropped.words, std::vector<std::uint32_t>{0});
  EXPECT_EQ(r.stop_tokens, 2u);
  EXPECT_EQ(r.not_in_index_tokens, 4u);  // and, unused, nothing, here
  EXPECT_EQ(r.unknown_tokens, 0u);
  const QuerySet extended = make_query_set(ix, q, {&emb}, &r);
  ASSERT_EQ(extended.words, (std::vector<std::uint32_t>{0, 4}));
  EXPECT_EQ(extended.extra_words, std::vector<std::string>{"unused"});
  EXPECT_EQ(query_word_vector(ix, extended, 4)[0], 9.0f);
  EXPECT_EQ(r.stop_tokens, 2u);
  EXPECT_EQ(r.not_in_index_tokens, 0u);
  EXPECT_EQ(r.unknown_tokens, 3u);  // and, nothing, here: in neither
  const Embeddings wrong({"x"}, {1, 2}, 2);
  EXPECT_THROW(make_query_set(ix, q, {&wrong}), Error);
}

// An index remembers how it was built (stop words, tokenizer, weighting, the vectors' fingerprint,
// the texts), through a file and back; query-time stop words and embeddings are checked against
// it, naming what differs.
TEST(Index, RecordsHowItWasBuiltAndChecksQueryTimeInputs) {
  StopWords stop;
  stop.add("the");
  stop.add("And");
  BuildOptions o;
  o.stopwords = &stop;
  o.weighting = Weighting::tfidf;
  const Embeddings emb = tiny_embeddings();
  const IndexData d = build_index_data(emb, tiny_docs(), o);
  EXPECT_EQ(d.stopwords, (std::vector<std::string>{"and", "the"}));
  const std::string path = test::write_file("recorded.idx", "");
  Index::save(d, path);
  const Index ix = Index::load(path);
  EXPECT_EQ(ix.stopwords(), stop);
  EXPECT_EQ(ix.tokenizer_version(), kTokenizerVersion);
  EXPECT_EQ(ix.weighting(), Weighting::tfidf);
  EXPECT_EQ(ix.source(), path);
  ASSERT_TRUE(ix.has_text());
  for (std::size_t i = 0; i < ix.n_docs(); ++i) EXPECT_EQ(ix.text(i), d.texts[i]);
  EXPECT_EQ(ix.text(0), tiny_docs()[0].text);
  EXPECT_EQ(ix.data().texts, d.texts);
  EXPECT_EQ(ix.data().stopwords, d.stopwords);
  EXPECT_EQ(Index::from_data(ix.data()).embeddings_fingerprint(), ix.embeddings_fingerprint());
  // The fingerprint follows the vectors.
  IndexData moved = d;
  moved.vectors[0] += 1;
  EXPECT_NE(Index::from_data(moved).embeddings_fingerprint(), ix.embeddings_fingerprint());
  // A shard reads its own documents' texts.
  const Index part = ix.shard(1, ix.n_docs());
  EXPECT_EQ(part.text(0), d.texts[1]);
  // Its bytes: the file's image; a shard's, its own documents.
  EXPECT_EQ(ix.to_bytes(), test::read_file(path));
  const Index part_again = Index::from_bytes(part.to_bytes());
  EXPECT_EQ(part_again.n_docs(), part.n_docs());
  EXPECT_EQ(part_again.text(0), d.texts[1]);

  check_stopwords(ix, stop, "same");
  StopWords other = stop;
  other.add("a");
  try {
    check_stopwords(ix, other, "--stopwords other.txt");
    ADD_FAILURE() << "other stop words accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--stopwords other.txt: 3 stop words"), std::string::npos)
        << e.what();
  }
  check_embeddings(ix, emb);
  const Embeddings changed({"cat"}, std::vector<float>(emb.dim(), 0.5f), emb.dim());
  try {
    check_embeddings(ix, changed);
    ADD_FAILURE() << "other embeddings accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not the embeddings"), std::string::npos) << e.what();
  }

  // Without texts: none stored, and asking is an error.
  o.keep_text = false;
  const Index bare = Index::from_data(build_index_data(emb, tiny_docs(), o));
  EXPECT_FALSE(bare.has_text());
  EXPECT_EQ(bare.text_bytes(), 0u);
  EXPECT_THROW((void)bare.text(0), Error);
}

// An index file of the previous format is refused with a word to rebuild it.
TEST(Index, RefusesThePreviousFormatWithAWordToRebuild) {
  std::string path = test::write_file("old_format.idx", "");
  Index::save(test::random_index(5, 10, 3, 3, 1), path);
  std::string bytes = test::read_file(path);
  const std::uint32_t old_version = 1;
  std::memcpy(bytes.data() + 8, &old_version, sizeof old_version);
  path = test::write_file("old_format.idx", bytes);
  try {
    (void)Index::load(path);
    ADD_FAILURE() << "a version-1 file loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rebuild it with `lcrwmd build`"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lcrwmd

namespace lcrwmd {
namespace {

// An index keeps the tokenizer its documents were read with: one of version 1 reads its queries
// with version 1 through a file, a shard, its bytes and its data, never with the current one; a
// version this build does not know is refused, naming what to do.
TEST(Index, KeepsItsTokenizerVersion) {
  const Embeddings emb({"federer\xe2\x80\x99s", "federer", "comeback"}, {1, 0, 0, 1, 1, 1}, 2);
  const std::vector<RawDocument> docs = {{"a", "", "Federer\xe2\x80\x99s comeback", 1},
                                         {"b", "", "federer", 2}};
  const IndexData v2 = build_index_data(emb, docs, {});
  EXPECT_EQ(v2.tokenizer_version, kTokenizerVersion);
  EXPECT_EQ(v2.vocab, (std::vector<std::string>{"federer", "comeback"}));
  IndexData v1 = v2;  // as an older build wrote it
  v1.tokenizer_version = 1;
  const std::string path = test::write_file("tokenizer_v1.idx", "");
  Index::save(v1, path);
  const Index ix = Index::load(path);
  EXPECT_EQ(ix.tokenizer_version(), 1u);
  EXPECT_EQ(ix.data().tokenizer_version, 1u);
  EXPECT_EQ(ix.shard(0, 1).tokenizer_version(), 1u);
  EXPECT_EQ(Index::from_bytes(ix.to_bytes()).tokenizer_version(), 1u);
  EXPECT_EQ(select_documents(ix.data(), std::vector<std::size_t>{1}).tokenizer_version, 1u);
  // Its queries read as version 1 reads them: "Federer’s" is no word of its vocabulary there.
  const std::vector<RawDocument> q = {{"q", "", "Federer\xe2\x80\x99s", 1}};
  EXPECT_EQ(make_query_set(ix, q, {}).size(), 0u) << "version 1 read as version 2";
  const Index now = Index::from_data(v2);
  const QuerySet new_q = make_query_set(now, q, {});
  ASSERT_EQ(new_q.size(), 1u);
  EXPECT_EQ(now.word(new_q.words[0]), "federer");
  // A version from the future, or 0: refused, saying what to do.
  IndexData future = v2;
  future.tokenizer_version = kTokenizerVersion + 1;
  EXPECT_THROW(Index::save(future, test::write_file("tokenizer_v9.idx", "")), Error);
  for (const std::uint32_t version : {0u, kTokenizerVersion + 1}) {
    try {
      check_tokenizer_version(version);
      ADD_FAILURE() << version;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(version ? "newer lcrwmd" : "lcrwmd build"),
                std::string::npos)
          << e.what();
    }
  }
}

// Text that is not UTF-8 is refused naming the document and its line, in a build and in queries.
TEST(Index, RefusesInvalidUtf8NamingTheDocument) {
  const Embeddings emb({"cafe"}, {1, 0}, 2);
  const std::vector<RawDocument> docs = {{"ok", "", "cafe", 1}, {"bad", "", "caf\xe9", 7}};
  try {
    build_index_data(emb, docs, {});
    ADD_FAILURE() << "built";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'bad' on line 7"), std::string::npos) << m;
    EXPECT_NE(m.find("UTF-8"), std::string::npos) << m;
  }
  const Index ix = Index::from_data(build_index_data(emb, {docs[0]}, {}));
  EXPECT_THROW(make_query_set(ix, {docs[1]}, {}), Error);
}

}  // namespace
}  // namespace lcrwmd
