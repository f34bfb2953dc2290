// fastText in the engine: training (deterministic, whole or not at all, refusing what cannot
// train), a model read as word vectors (fastText's own, for seen and unseen words; damaged,
// foreign and classifier models refused naming the file), and an index built from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "lcrwmd/error.h"
#include "lcrwmd/fasttext.h"
#include "lcrwmd/query.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

namespace fs = std::filesystem;

// Documents over three topics of twenty words each, a topic a document: words that share a
// topic share contexts, as in text.
std::vector<RawDocument> topic_docs(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const char* topics[] = {"tennis", "rugby", "cricket"};
  std::vector<RawDocument> docs;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string topic = topics[i % 3];
    std::string text;
    for (int t = 0; t < 40; ++t) {
      const auto w = std::uniform_int_distribution<int>(0, 19)(rng);
      text += (t ? " " : "") + topic + std::to_string(w) + (t % 7 == 0 ? " the" : "");
    }
    docs.push_back({"d" + std::to_string(i), topic, text, i + 1});
  }
  return docs;
}

FastTextOptions small_options() {
  FastTextOptions o;
  o.dim = 8;
  o.epochs = 2;
  o.min_count = 1;
  o.buckets = 2000;
  o.threads = 1;
  o.seed = 3;
  return o;
}

std::string trained(const std::string& name, const FastTextOptions& o = small_options(),
                    std::uint32_t corpus_seed = 1) {
  const std::string path = test::tmp(name);
  train_fasttext(topic_docs(150, corpus_seed), nullptr, o, path, "topics");
  return path;
}

// The files of the test directory whose names start with `prefix`.
std::vector<std::string> files_starting(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::temp_dir()))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  return out;
}

TEST(FastText, OneThreadAndOneSeedGiveTheSameModelBytes) {
  const std::string a = trained("same_a.bin"), b = trained("same_b.bin");
  EXPECT_EQ(test::read_file(a), test::read_file(b));
  FastTextOptions other = small_options();
  other.seed = 4;
  EXPECT_NE(test::read_file(a), test::read_file(trained("same_c.bin", other)));
  // Nothing left beside the models: the tokens' scratch file and the temporaries are gone.
  EXPECT_EQ(files_starting("same_").size(), 3u);
}

TEST(FastText, TrainingReportsWhatItRead) {
  StopWords stop;
  stop.add("the");
  const auto docs = topic_docs(30, 1);
  const TrainingReport r =
      train_fasttext(docs, &stop, small_options(), test::tmp("report.bin"), "topics");
  EXPECT_EQ(r.documents, 30u);
  EXPECT_EQ(r.tokens, 30u * 40);  // "the" dropped
  EXPECT_EQ(r.words, 61u);        // fastText's dictionary counts the end of a line, "</s>"
  const auto model = FastTextModel::load(test::tmp("report.bin"));
  EXPECT_EQ(model->words(), 61u);
  float v[8];
  EXPECT_EQ(model->dim(), 8u);
  EXPECT_TRUE(model->lookup("tennis3", v));
}

// fastText's own command prints each word's vector with five significant digits: ours must be
// those, for words of the model and words it never saw (their n-grams alone).
TEST(FastText, VectorsAreFastTextsOwnForSeenAndUnseenWords) {
  if (std::system("command -v fasttext >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "fastText's command (Debian's fasttext) is not installed";
  const std::string path = trained("own.bin");
  const std::vector<std::string> words = {"tennis3", "rugby19", "cricket0", "tenis3",
                                          "rugbyy",  "zzqv",    "x",        "über"};
  {
    std::ofstream w(test::tmp("own_words.txt"));
    for (const std::string& word : words) w << word << "\n";
  }
  const std::string cmd = "fasttext print-word-vectors " + path + " < " +
                          test::tmp("own_words.txt") + " > " + test::tmp("own_out.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto model = FastTextModel::load(path);
  std::ifstream in(test::tmp("own_out.txt"));
  std::size_t lines = 0, unseen = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    ASSERT_LT(lines, words.size());
    EXPECT_EQ(word, words[lines]);
    std::vector<float> ours(model->dim());
    ASSERT_TRUE(model->lookup(word, ours.data())) << word;
    for (std::size_t k = 0; k < model->dim(); ++k) {
      double theirs = 0;
      ASSERT_TRUE(fields >> theirs) << line;
      EXPECT_NEAR(ours[k], theirs, 1e-5 + 1e-4 * std::fabs(theirs)) << word << " " << k;
    }
    bool in_dictionary = false;
    for (std::size_t i = 0; i < model->words(); ++i) in_dictionary |= model->word(i) == word;
    unseen += !in_dictionary;
  }
  EXPECT_EQ(lines, words.size());
  EXPECT_EQ(unseen, 5u);
}

TEST(FastText, AWordNeverSeenHasAVectorOnlyWithNgrams) {
  const auto with = FastTextModel::load(trained("ngrams.bin"));
  std::vector<float> v(8);
  ASSERT_TRUE(with->lookup("tennisss", v.data()));
  EXPECT_TRUE(with->covers_every_word());
  double sq = 0;
  for (const float x : v) sq += double{x} * x;
  EXPECT_GT(sq, 0);
  FastTextOptions o = small_options();
  o.max_n = 0;
  const auto without = FastTextModel::load(trained("no_ngrams.bin", o));
  EXPECT_FALSE(without->covers_every_word());
  EXPECT_TRUE(without->lookup("tennis3", v.data()));
  EXPECT_FALSE(without->lookup("tennisss", v.data()));
  // As a table (Embeddings::load with the words wanted): the unseen word only with n-grams.
  const WordSet wanted = {"tennis3", "tennisss"};
  EXPECT_EQ(Embeddings::load(test::tmp("ngrams.bin"), &wanted).size(), 2u);
  EXPECT_EQ(Embeddings::load(test::tmp("no_ngrams.bin"), &wanted).size(), 1u);
}

// fastText's command takes words starting "__label__" for labels, which have no row of their
// own (our tokenizer splits such words at the underscores): a model holding labels gives them
// their n-grams' vector, as any unseen word (libfasttext would read another word's row, or past
// the matrix without n-grams).
TEST(FastText, AModelsLabelsAreUnseenWords) {
  std::vector<RawDocument> docs = topic_docs(60, 1);
  for (RawDocument& d : docs) d.text += " __label__" + d.label;
  if (std::system("command -v fasttext >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "fastText's command (Debian's fasttext) is not installed";
  {
    std::ofstream text(test::tmp("labels.txt"));
    for (const RawDocument& d : docs) text << d.text << "\n";
  }
  for (const bool ngrams : {true, false}) {
    const std::string stem = test::tmp(ngrams ? "labels_cli" : "labels_cli0");
    const std::string cmd = "fasttext skipgram -input " + test::tmp("labels.txt") + " -output " +
                            stem + " -dim 4 -epoch 1 -minCount 1 -thread 1 -verbose 0" +
                            (ngrams ? " -bucket 500" : " -maxn 0") + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const std::string labels =
        "fasttext dump " + stem + ".bin dict | grep -q '^__label__tennis .* label$'";
    ASSERT_EQ(std::system(labels.c_str()), 0) << "the model holds the label";
    const auto cli = FastTextModel::load(stem + ".bin");
    std::vector<float> w(cli->dim());
    EXPECT_EQ(cli->lookup("__label__tennis", w.data()), ngrams);
    EXPECT_TRUE(cli->lookup("tennis3", w.data()));
  }
}

TEST(FastText, AnEmptyOrWordlessCorpusIsRefusedNamingIt) {
  const std::string out = test::tmp("empty.bin");
  try {
    train_fasttext({}, nullptr, small_options(), out, "nothing.tsv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing.tsv"), std::string::npos) << e.what();
  }
  StopWords stop;
  stop.add("the");
  stop.add("and");
  const std::vector<RawDocument> docs = {{"a", "", "The and the, AND!", 1}, {"b", "", "...", 2}};
  EXPECT_THROW(train_fasttext(docs, &stop, small_options(), out, "stops.tsv"), Error);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(files_starting("empty.bin").size(), 0u);
  FastTextOptions bad = small_options();
  bad.model = "supervised";
  EXPECT_THROW(check_options(bad), Error);
  bad = small_options();
  bad.min_n = 7;
  EXPECT_THROW(check_options(bad), Error);
}

TEST(FastText, AStoppedTrainingLeavesNoFile) {
  const std::string out = test::tmp("stopped.bin");
  FastTextOptions o = small_options();
  o.epochs = 50;
  std::size_t calls = 0;
  EXPECT_THROW(train_fasttext(topic_docs(150, 1), nullptr, o, out, "topics",
                              [&](const TrainingProgress&) { return ++calls < 2; }),
               Error);
  EXPECT_GE(calls, 2u);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(files_starting("stopped.bin").size(), 0u);
}

// Damaged, foreign and classifier models: an Error naming the file, from every reader.
TEST(FastText, TruncatedForeignAndSupervisedModelsAreRefusedNamingTheFile) {
  const std::string whole = test::read_file(trained("whole.bin"));
  ASSERT_GT(whole.size(), 1000u);
  for (const std::size_t cut : {std::size_t{4}, std::size_t{30}, std::size_t{100}, std::size_t{400},
                                whole.size() / 2, whole.size() - 1}) {
    const std::string path = test::write_file("cut.bin", whole.substr(0, cut));
    for (const auto& read : {+[](const std::string& p) { (void)FastTextModel::load(p); },
                             +[](const std::string& p) { (void)Embeddings::load(p); },
                             +[](const std::string& p) { (void)open_word_vectors(p); }}) {
      try {
        read(path);
        ADD_FAILURE() << "cut at " << cut;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
    }
  }
  // Bytes after the model, and a foreign file with the signature.
  EXPECT_THROW(FastTextModel::load(test::write_file("long.bin", whole + "x")), Error);
  std::string foreign = whole.substr(0, 8) + std::string(200, '\xff');
  EXPECT_THROW(FastTextModel::load(test::write_file("foreign.bin", foreign)), Error);
  // A classifier: the model kind (the eighth argument, after the signature) says supervised.
  std::string supervised = whole;
  const std::int32_t sup = 3;
  std::memcpy(supervised.data() + 8 + 7 * 4, &sup, 4);
  try {
    FastTextModel::load(test::write_file("classifier.bin", supervised));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("supervised"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("classifier.bin"), std::string::npos) << e.what();
  }
  // An output matrix whose header claims rows wider than the model's dimension (libfasttext
  // would allocate what it says): the header sits before the last words x dim floats.
  {
    const auto model = FastTextModel::load(trained("whole.bin"));
    const std::size_t header = whole.size() - model->words() * model->dim() * 4 - 16;
    std::int64_t rows = 0;
    std::memcpy(&rows, whole.data() + header, 8);
    ASSERT_EQ(rows, static_cast<std::int64_t>(model->words()));
    std::string wide = whole;
    const std::int64_t cols = std::int64_t{1} << 40;
    std::memcpy(wide.data() + header + 8, &cols, 8);
    try {
      FastTextModel::load(test::write_file("wide.bin", wide));
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("output matrix"), std::string::npos) << e.what();
    }
  }
  // A word counted 10^16 times in a model trained with the hierarchical softmax: libfasttext's
  // tree would make a node its own parent and grow its path until memory ran out. The first
  // entry's count follows its word, after the signature (8 bytes), the arguments (56) and the
  // dictionary's sizes (28).
  {
    std::string counted = whole;
    const std::int32_t hs = 1;  // Args::loss, the seventh argument
    std::memcpy(counted.data() + 8 + 6 * 4, &hs, 4);
    const std::size_t count_at = counted.find('\0', 92) + 1;
    const std::int64_t huge = 10'000'000'000'000'000;
    std::memcpy(counted.data() + count_at, &huge, 8);
    try {
      FastTextModel::load(test::write_file("counted.bin", counted));
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("count of 10000000000000000"), std::string::npos)
          << e.what();
    }
  }
  // A NaN in a row: eight bytes of ones hold one whatever the rows' alignment, inside the input
  // matrix (most of the file).
  std::string nan = whole;
  std::memset(nan.data() + nan.size() / 2, 0xff, 8);
  EXPECT_THROW(FastTextModel::load(test::write_file("nan.bin", nan)), Error);
}

// An index built from a model reads its queries' unseen words with it, and refuses another
// model at query time.
TEST(FastText, AnIndexTakesUnseenQueryWordsFromItsModelAndRefusesAnother) {
  const std::string a = trained("index_a.bin");
  const std::string b = trained("index_b.bin", small_options(), 2);
  const auto docs = topic_docs(150, 1);
  const WordSet tokens = distinct_tokens(docs);
  const Index index = Index::from_data(build_index_data(Embeddings::load(a, &tokens), docs, {}));
  const auto model_a = open_word_vectors(a);
  EXPECT_EQ(model_a->format(), "fasttext");
  EXPECT_NO_THROW(check_embeddings(index, *model_a));
  EXPECT_THROW(check_embeddings(index, *open_word_vectors(b)), Error);
  QueryOptions qo;
  qo.embeddings = model_a.get();
  TextReport report;
  const QuerySet q = make_query_set(index, {{"q", "", "tennis3 tenniss rugbyish", 1}}, qo, &report);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.length(0), 3u);  // none dropped
  EXPECT_EQ(report.unknown_tokens, 0u);
  EXPECT_EQ(q.extra_words, (std::vector<std::string>{"tenniss", "rugbyish"}));
  std::vector<float> v(8);
  ASSERT_TRUE(model_a->lookup("rugbyish", v.data()));
  EXPECT_EQ(std::vector<float>(q.extra_vectors.begin() + 8, q.extra_vectors.end()), v);
}

// Unit-length vectors: every index vector and every query vector scaled alike, recorded in the
// file and kept through shards and merges.
TEST(UnitVectors, AreRecordedAndAppliedToQueries) {
  const Embeddings emb({"cat", "dog", "mat", "zero"}, {3, 4, 0, 1, 1, 1, 0, 0, 2, 0, 0, 0}, 3);
  const std::vector<RawDocument> docs = {{"a", "", "cat dog", 1}, {"b", "", "dog zero", 2}};
  BuildOptions bo;
  bo.unit_vectors = true;
  const IndexData d = build_index_data(emb, docs, bo);
  EXPECT_TRUE(d.unit_vectors);
  for (std::size_t u = 0; u < d.vocab.size(); ++u) {
    double sq = 0;
    for (std::size_t k = 0; k < 3; ++k) sq += double{d.vectors[u * 3 + k]} * d.vectors[u * 3 + k];
    EXPECT_NEAR(sq, d.vocab[u] == "zero" ? 0.0 : 1.0, 1e-6) << d.vocab[u];
  }
  const auto cat =
      static_cast<std::size_t>(std::find(d.vocab.begin(), d.vocab.end(), "cat") - d.vocab.begin());
  ASSERT_LT(cat, d.vocab.size());
  EXPECT_EQ(d.vectors[cat * 3], 0.6f);  // (3, 4, 0) / 5
  const std::string path = test::tmp("unit.idx");
  Index::save(d, path);
  const Index index = Index::load(path);
  EXPECT_TRUE(index.unit_vectors());
  EXPECT_TRUE(index.shard(0, 1).unit_vectors());
  EXPECT_TRUE(select_documents(d, std::vector<std::size_t>{1}).unit_vectors);
  EXPECT_NO_THROW(check_embeddings(index, emb));  // compared as scaled
  QueryOptions qo;
  qo.embeddings = &emb;
  const QuerySet q = make_query_set(index, {{"q", "", "mat cat", 1}}, qo);
  ASSERT_EQ(q.extra_words, std::vector<std::string>{"mat"});
  EXPECT_EQ(q.extra_vectors, (std::vector<float>{0, 0, 1}));  // mat: (0, 0, 2) scaled
  // An index of the vectors as they are is another index: parts of both do not merge.
  const Index plain = Index::from_data(build_index_data(emb, docs, {}));
  EXPECT_FALSE(plain.unit_vectors());
  const std::vector<const Index*> parts = {&index, &plain};
  const std::vector<std::vector<std::size_t>> all = {{0, 1}, {0, 1}};
  EXPECT_THROW(merge_documents(parts, all), Error);
  // A zero vector stays zero.
  float zero[3] = {0, 0, 0};
  to_unit_length(zero, 3);
  EXPECT_EQ(zero[0] + zero[1] + zero[2], 0.0f);
}

}  // namespace
}  // namespace lcrwmd
