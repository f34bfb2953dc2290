// A learned metric as builds and queries apply it: its file, the identity giving the
// unsupervised index's answers for every method, a metric's map and weights in the index and
// in queries read from text, the refusals, and index files of the version before metrics.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "io/index_format.h"
#include "io/index_image.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/learn.h"
#include "lcrwmd/metric.h"
#include "lcrwmd/segments.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

std::string demo(const std::string& file) {
  return std::string(LCRWMD_SOURCE_DIR) + "/data/demo/" + file;
}

struct Demo {
  Embeddings emb = Embeddings::load(demo("embeddings.bin"));
  StopWords stop = StopWords::load(demo("stop_words.txt"));
  std::vector<RawDocument> docs = read_tsv(demo("train.tsv"));
  std::vector<RawDocument> queries = read_tsv(demo("queries.tsv"));
  IndexData build(std::shared_ptr<const Metric> metric = nullptr, bool unit = false,
                  Weighting w = Weighting::tf) const {
    BuildOptions bo;
    bo.stopwords = &stop;
    bo.metric = std::move(metric);
    bo.unit_vectors = unit;
    bo.weighting = w;
    return build_index_data(emb, docs, bo);
  }
};

const Demo& demo_data() {
  static const Demo d;
  return d;
}

// Every word of the embeddings, sorted, and the fingerprint of their vectors.
std::vector<std::string> words_of(const Embeddings& e) {
  std::vector<std::string> w;
  for (std::size_t i = 0; i < e.size(); ++i) w.emplace_back(e.word(i));
  std::sort(w.begin(), w.end());
  return w;
}
std::uint64_t vectors_fingerprint(const Embeddings& e, const std::vector<std::string>& words,
                                  bool unit) {
  std::vector<float> rows(words.size() * e.dim());
  for (std::size_t i = 0; i < words.size(); ++i) {
    e.lookup(words[i], rows.data() + i * e.dim());
    if (unit) to_unit_length(rows.data() + i * e.dim(), e.dim());
  }
  return Metric::fingerprint_vectors(words, e.dim(),
                                     [&](std::size_t i) { return rows.data() + i * e.dim(); });
}

std::shared_ptr<const Metric> identity(const Embeddings& e, bool unit = false) {
  const std::size_t d = e.dim();
  std::vector<float> map(d * d, 0.0f);
  for (std::size_t k = 0; k < d; ++k) map[k * d + k] = 1.0f;
  const std::vector<std::string> words = words_of(e);
  return std::make_shared<const Metric>(d, d, map, words, std::vector<float>(words.size(), 1.0f),
                                        unit, vectors_fingerprint(e, words, unit));
}

// A random map of `out` rows and random weights for half the words (the others weigh 1).
std::shared_ptr<const Metric> random_metric(const Embeddings& e, std::size_t out,
                                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::uniform_real_distribution<float> weight(0.2f, 3.0f);
  const std::size_t d = e.dim();
  std::vector<float> map(out * d);
  for (float& x : map) x = normal(rng);
  std::vector<std::string> words = words_of(e), some;
  std::vector<float> weights;
  for (std::size_t i = 0; i < words.size(); i += 2) {
    some.push_back(words[i]);
    weights.push_back(weight(rng));
  }
  return std::make_shared<const Metric>(d, out, map, some, weights, false,
                                        vectors_fingerprint(e, some, false));
}

// Every method in every direction it has (bm25 and hybrid read the queries' terms: the queries
// here are read from text, so they have them).
std::vector<SearchOptions> every_method() {
  std::vector<SearchOptions> out;
  for (const Method m : methods())
    for (const Direction direction : kDirections) {
      if (!m->has(direction)) continue;
      SearchOptions o;
      o.method = m;
      o.direction = direction;
      o.parameters.set("act_steps", 2);
      out.push_back(o);
    }
  return out;
}

TEST(Metric, AFileRoundTripsAndDamageIsNamed) {
  const Demo& d = demo_data();
  const auto m = random_metric(d.emb, 5, 1);
  const std::string path = test::tmp("m.lcm");
  m->save(path);
  const Metric back = Metric::load(path);
  EXPECT_EQ(back.fingerprint(), m->fingerprint());
  EXPECT_EQ(back.map(), m->map());
  EXPECT_EQ(back.words(), m->words());
  EXPECT_EQ(back.weights(), m->weights());
  EXPECT_EQ(back.vectors_fingerprint(), m->vectors_fingerprint());
  EXPECT_EQ(back.weight(m->words()[2]), m->weights()[2]);
  EXPECT_EQ(back.weight("no-such-word"), 1.0f);
  std::string bytes = test::read_file(path);
  for (const std::size_t at : {std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    try {
      Metric::from_bytes(bad, "damaged.lcm");
      ADD_FAILURE() << "a flipped byte at " << at << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("damaged.lcm"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(Metric::from_bytes(bytes.substr(0, bytes.size() - 9), "cut.lcm"), Error);
  EXPECT_THROW(Metric::from_bytes("", "empty.lcm"), Error);
  // What is checked on the way in.
  EXPECT_THROW(Metric(3, 4, std::vector<float>(12), {}, {}, false, 0), Error);  // rows > columns
  EXPECT_THROW(Metric(2, 1, {1.0f, NAN}, {}, {}, false, 0), Error);
  EXPECT_THROW(Metric(2, 1, {1.0f, 0.0f}, {"a", "a"}, {1.0f, 1.0f}, false, 0), Error);
  EXPECT_THROW(Metric(2, 1, {1.0f, 0.0f}, {"a"}, {0.0f}, false, 0), Error);
}

// The identity with unit weights: the same vectors and weights as a build without a metric, and
// the same answers, bit for bit, from every method for queries read from text.
TEST(Metric, TheIdentityGivesTheUnsupervisedAnswersForEveryMethod) {
  const Demo& d = demo_data();
  for (const bool unit : {false, true}) {
    const IndexData plain_data = d.build(nullptr, unit, Weighting::tfidf);
    const IndexData with_data = d.build(identity(d.emb, unit), unit, Weighting::tfidf);
    EXPECT_EQ(with_data.vectors, plain_data.vectors);
    EXPECT_EQ(with_data.values, plain_data.values);
    const Index plain = Index::from_data(plain_data), with = Index::from_data(with_data);
    ASSERT_NE(with.metric(), nullptr);
    EXPECT_EQ(plain.metric(), nullptr);
    QueryOptions qo;
    qo.embeddings = &d.emb;
    const QuerySet qp = make_query_set(plain, d.queries, qo),
                   qw = make_query_set(with, d.queries, qo);
    ASSERT_EQ(qw.weights, qp.weights);
    ASSERT_EQ(qw.extra_vectors, qp.extra_vectors);
    const CpuSearcher sp(plain), sw(with);
    for (const SearchOptions& o : every_method()) {
      const SearchResults a = sp.search(qp, 5, o), b = sw.search(qw, 5, o);
      EXPECT_EQ(a.indices, b.indices) << to_string(o.method) << " " << to_string(o.direction);
      EXPECT_EQ(a.distances, b.distances) << to_string(o.method) << " " << to_string(o.direction);
    }
  }
}

// A metric's map and weights, in the index and in queries: each word's vector is A x, each
// weight count x w / sum; a query read from a document's text weighs and maps as the document
// does, and finds it at distance 0; an unseen word's vector is mapped too.
TEST(Metric, VectorsAreMappedAndWordsWeightedInTheIndexAndItsQueries) {
  const Demo& d = demo_data();
  const auto m = random_metric(d.emb, 7, 2);
  const IndexData plain = d.build();
  const Index ix = Index::from_data(d.build(m));
  ASSERT_EQ(ix.dim(), 7u);
  ASSERT_EQ(ix.input_dim(), d.emb.dim());
  ASSERT_EQ(ix.vocab_size(), plain.vocab.size());
  std::vector<float> x(d.emb.dim());
  for (std::size_t u = 0; u < ix.vocab_size(); u += 7) {
    ASSERT_TRUE(d.emb.lookup(ix.word(u), x.data()));
    for (std::size_t r = 0; r < 7; ++r) {
      double s = 0;
      for (std::size_t e = 0; e < x.size(); ++e) s += double{m->map()[r * x.size() + e]} * x[e];
      EXPECT_NEAR(ix.vector(u)[r], s, 1e-5 * (1 + std::fabs(s))) << ix.word(u);
    }
  }
  // Values: the plain build's (TF) times each word's weight, renormalised.
  for (std::size_t i = 0; i < ix.n_docs(); ++i) {
    double total = 0;
    for (std::uint64_t p = plain.indptr[i]; p < plain.indptr[i + 1]; ++p)
      total += double{plain.values[p]} * m->weight(plain.vocab[plain.indices[p]]);
    for (std::uint64_t p = plain.indptr[i]; p < plain.indptr[i + 1]; ++p) {
      const double want =
          double{plain.values[p]} * m->weight(plain.vocab[plain.indices[p]]) / total;
      EXPECT_NEAR(ix.values()[p], want, 1e-6);
    }
  }
  // A document's text as a query: its own weights, and itself at distance 0.
  QueryOptions qo;
  qo.embeddings = &d.emb;
  const std::vector<RawDocument> first(d.docs.begin(), d.docs.begin() + 3);
  const QuerySet q = make_query_set(ix, first, qo);
  ASSERT_EQ(q.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) {
    const auto words = ix.doc_words(j);
    ASSERT_EQ(q.length(j), words.size());
    for (std::size_t p = 0; p < words.size(); ++p) {
      EXPECT_EQ(q.words[q.indptr[j] + p], words[p]);
      EXPECT_NEAR(q.weights[q.indptr[j] + p], ix.values()[ix.indptr()[j] + p], 1e-6);
    }
  }
  const SearchResults r = CpuSearcher(ix).search(q, 1, {});
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(r.indices[j], static_cast<std::int64_t>(j));
    EXPECT_NEAR(r.distances[j], 0.0f, 1e-4f);
  }
  // A word of the embeddings the index lacks: mapped as the index's words are.
  std::string unseen;
  for (std::size_t i = 0; i < d.emb.size() && unseen.empty(); ++i)
    if (!ix.find_word(d.emb.word(i)) && !d.stop.contains(d.emb.word(i))) unseen = d.emb.word(i);
  ASSERT_FALSE(unseen.empty());
  const QuerySet u =
      make_query_set(ix, {RawDocument{.id = "u", .label = "", .text = unseen, .line = 1}}, qo);
  ASSERT_EQ(u.extra_words.size(), 1u);
  std::vector<float> mapped(7);
  ASSERT_TRUE(d.emb.lookup(unseen, x.data()));
  m->apply(x.data(), mapped.data());
  EXPECT_EQ(u.extra_vectors, mapped);
  // The index file keeps the metric; another metric's shards do not join it.
  const std::string path = test::tmp("metric.idx");
  Index::save(ix.data(), path);
  const Index loaded = Index::load(path);
  ASSERT_NE(loaded.metric(), nullptr);
  EXPECT_EQ(loaded.metric()->fingerprint(), m->fingerprint());
  const Index other = Index::from_data(d.build(random_metric(d.emb, 7, 3)));
  EXPECT_THROW(SegmentSet({&loaded, &other}), Error);
  EXPECT_NO_THROW(SegmentSet({&loaded, &ix}));
}

// A collection's merge of parts built with a metric (and unit-length vectors) is one build's:
// both kept, not dropped.
TEST(Metric, MergesKeepTheMetricAndUnitVectors) {
  const Demo& d = demo_data();
  const auto m = std::make_shared<const Metric>(*identity(d.emb, true));
  BuildOptions bo;
  bo.stopwords = &d.stop;
  bo.metric = m;
  bo.unit_vectors = true;
  const std::size_t half = d.docs.size() / 2;
  const Index a = Index::from_data(
      build_index_data(d.emb, std::vector<RawDocument>(d.docs.begin(), d.docs.begin() + half), bo));
  const Index b = Index::from_data(
      build_index_data(d.emb, std::vector<RawDocument>(d.docs.begin() + half, d.docs.end()), bo));
  std::vector<std::size_t> all_a(a.n_docs()), all_b(b.n_docs());
  std::iota(all_a.begin(), all_a.end(), std::size_t{0});
  std::iota(all_b.begin(), all_b.end(), std::size_t{0});
  const std::vector<const Index*> parts{&a, &b};
  const std::vector<std::vector<std::size_t>> docs{all_a, all_b};
  const IndexData merged = merge_documents(parts, docs);
  const IndexData whole = build_index_data(d.emb, d.docs, bo);
  EXPECT_TRUE(merged.unit_vectors);
  ASSERT_TRUE(merged.metric);
  EXPECT_EQ(merged.metric->fingerprint(), m->fingerprint());
  EXPECT_EQ(merged.vectors, whole.vectors);
  EXPECT_EQ(merged.values, whole.values);
  // A part without the metric does not merge with them.
  const Index plain = Index::from_data(d.build(nullptr, true));
  const std::vector<const Index*> mixed{&a, &plain};
  std::vector<std::size_t> all_plain(plain.n_docs());
  std::iota(all_plain.begin(), all_plain.end(), std::size_t{0});
  EXPECT_THROW(merge_documents(mixed, std::vector<std::vector<std::size_t>>{all_a, all_plain}),
               Error);
}

TEST(Metric, BuildsAndQueriesRefuseWhatDoesNotFit) {
  const Demo& d = demo_data();
  const auto m = random_metric(d.emb, 4, 5);
  // Built from vectors of another dimension, or scaled otherwise than the metric was learned.
  BuildOptions bo;
  bo.metric = m;
  bo.unit_vectors = true;
  EXPECT_THROW(build_index_data(d.emb, d.docs, bo), Error);
  const Embeddings narrow =
      Embeddings::load(test::write_file("narrow.vec", "2 2\nsoccer 1 0\ngoal 0 1\n"));
  bo.unit_vectors = false;
  EXPECT_THROW(build_index_data(narrow, d.docs, bo), Error);
  // Other vectors for its words: named.
  const Embeddings other(std::vector<std::string>{m->words()[0]},
                         std::vector<float>(d.emb.dim(), 0.5f), d.emb.dim());
  try {
    m->check_vectors(other, "m.lcm");
    ADD_FAILURE() << "other vectors were taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.lcm"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(m->check_vectors(d.emb, "m.lcm"));
  // Queries looked up in vectors of the metric's output dimension (the index's) are refused:
  // they are looked up in the vectors it was built from.
  const Index ix = Index::from_data(d.build(m));
  const Embeddings four(std::vector<std::string>{"soccer"}, std::vector<float>(4, 1.0f), 4);
  QueryOptions qo;
  qo.embeddings = &four;
  EXPECT_THROW(make_query_set(ix, d.queries, qo), Error);
  EXPECT_THROW(check_embeddings(ix, four), Error);
  EXPECT_NO_THROW(check_embeddings(ix, d.emb));
}

// learn_metric from an index: refusals naming the index, and a metric of its vocabulary that a
// build takes.
TEST(Metric, LearnedFromAnIndexsLabels) {
  const Demo& d = demo_data();
  LearnOptions o;
  o.centroid_epochs = 2;
  o.transport_epochs = 1;
  o.neighbors = 5;
  o.out_dim = 10;
  const std::string path = test::tmp("learn.idx");
  Index::save(d.build(), path);
  const Index train = Index::load(path);
  LearnReport r;
  const Metric m = learn_metric(train, o, {}, &r);
  EXPECT_EQ(m.out_dim(), 10u);
  EXPECT_EQ(m.in_dim(), d.emb.dim());
  EXPECT_EQ(m.words().size(), train.vocab_size());
  EXPECT_EQ(r.train_documents + r.held_out_documents, train.n_docs());
  EXPECT_NO_THROW(m.check_vectors(d.emb, "learned"));
  const Index applied = Index::from_data(d.build(std::make_shared<const Metric>(m)));
  EXPECT_EQ(applied.dim(), 10u);
  // No labels, one class, a metric already: refused, naming the index.
  auto relabelled = [&](const std::string& label, const std::string& name) {
    std::vector<RawDocument> docs = d.docs;
    for (RawDocument& doc : docs) doc.label = label;
    BuildOptions bo;
    bo.stopwords = &d.stop;
    Index::save(build_index_data(d.emb, docs, bo), test::tmp(name));
    return Index::load(test::tmp(name));
  };
  for (const auto& [label, name] :
       {std::pair<std::string, std::string>{"", "unlabelled.idx"}, {"sport", "one_class.idx"}}) {
    try {
      learn_metric(relabelled(label, name), o);
      ADD_FAILURE() << name << " was learned from";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(learn_metric(applied, o), Error);
}

// An index file of version 3 (before metrics) reads as it did: the same header but for the
// hashes' place.
TEST(Metric, IndexFilesOfTheVersionBeforeMetricsStillRead) {
  const Demo& d = demo_data();
  const IndexData data = d.build();
  const std::vector<char> v4 = io::index_image(data, 4);
  std::vector<char> v3 = v4;
  format::FileHeader h;
  std::memcpy(&h, v4.data(), sizeof h);
  ASSERT_EQ(h.metric_bytes, 0u);
  h.version = 3;
  std::memcpy(v3.data(), &h, sizeof h);
  const format::FileHeaderV3Tail tail{
      h.payload_hash, XXH3_64bits(v3.data(), format::kV3TailOffset), {}};
  std::memcpy(v3.data() + format::kV3TailOffset, &tail, sizeof tail);
  const Index old = Index::from_bytes(std::string(v3.begin(), v3.end()));
  EXPECT_EQ(old.metric(), nullptr);
  EXPECT_EQ(old.n_docs(), data.ids.size());
  EXPECT_EQ(old.embeddings_fingerprint(), Index::from_data(data).embeddings_fingerprint());
  // A damaged version-3 header is still caught.
  v3[40] = static_cast<char>(v3[40] ^ 1);
  EXPECT_THROW(Index::from_bytes(std::string(v3.begin(), v3.end())), Error);
  // A metric's length past the file's: refused (the header's hash covers it).
  std::vector<char> bad = io::index_image(d.build(random_metric(d.emb, 3, 9)));
  std::memcpy(&h, bad.data(), sizeof h);
  h.metric_bytes += 64;
  h.header_hash = XXH3_64bits(&h, offsetof(format::FileHeader, header_hash));
  std::memcpy(bad.data(), &h, sizeof h);
  EXPECT_THROW(Index::from_bytes(std::string(bad.begin(), bad.end())), Error);
}

}  // namespace
}  // namespace lcrwmd
