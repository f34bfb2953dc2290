// bm25 against Okapi BM25 written out directly in double over the same tokens (every token past
// the stop words, with a vector or without), and the index's lexical part as the file, its
// shards and shards built apart hold it.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "io/index_image.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/topk.h"
#include "methods/bm25/bm25.h"
#include "methods/hybrid/by_bound.h"
#include "methods/hybrid/fused_walk.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

// A vocabulary of 40 words, the first 30 with vectors; documents of 3..40 tokens, Zipf-like so
// that some words are in most documents, a few in one; stop words "w0" and "w1".
struct Corpus {
  Embeddings embeddings;
  std::vector<RawDocument> docs;
  StopWords stop;
};

// n documents over `vectors` words with vectors (dim-d) and `words` in all, Zipf-like, each
// 3 to 2 + `longest` words after its first ("w2", or one of w2..w501 where `varied`), then
// `copies` of document 17 (ties); w0 and w1 stop words.
struct CorpusShape {
  std::size_t vectors, dim, words, longest;
  bool varied;
  std::size_t copies;
};
Corpus corpus_of(std::size_t n, unsigned seed, const CorpusShape& shape) {
  std::mt19937 rng(seed);
  Corpus c;
  std::vector<std::string> words;
  std::vector<float> vectors;
  std::normal_distribution<float> g;
  for (std::size_t u = 0; u < shape.vectors; ++u) {
    words.push_back(test::numbered('w', u));
    for (std::size_t k = 0; k < shape.dim; ++k) vectors.push_back(g(rng));
  }
  c.embeddings = Embeddings(words, vectors, shape.dim);
  std::vector<double> weights;
  for (std::size_t u = 0; u < shape.words; ++u) weights.push_back(1.0 / static_cast<double>(u + 1));
  std::discrete_distribution<int> word(weights.begin(), weights.end());
  for (std::size_t i = 0; i < n; ++i) {
    std::string text = shape.varied ? test::numbered('w', 2 + rng() % 500) : "w2";
    const std::size_t len = 3 + rng() % shape.longest;
    for (std::size_t t = 0; t < len; ++t)
      text += ' ' + test::numbered('w', static_cast<std::size_t>(word(rng)));
    c.docs.push_back({test::numbered('d', i), "", text, i + 1});
  }
  for (std::size_t i = 0; i < shape.copies; ++i)
    c.docs.push_back({"copy" + std::to_string(i), "", c.docs[17].text, n + i + 1});
  c.stop.add("w0");
  c.stop.add("w1");
  return c;
}

// 30 words with vectors (4-d) and 10 without; every document holds w2, which has a vector.
Corpus corpus(std::size_t n, unsigned seed) {
  return corpus_of(n, seed, {30, 4, 40, 38, false, 0});
}

// Okapi BM25 in double, from the texts: the reference.
std::vector<double> direct_bm25(const Corpus& c, const std::string& query, double k1, double b) {
  std::vector<std::map<std::string, int>> tf;
  std::map<std::string, int> df;
  double total = 0;
  for (const RawDocument& d : c.docs) {
    std::map<std::string, int> f;
    for (const std::string& t : tokenize(d.text))
      if (!c.stop.contains(t)) ++f[t];
    for (const auto& [t, x] : f) {
      ++df[t];
      total += x;
    }
    tf.push_back(f);
  }
  const double n = static_cast<double>(c.docs.size()), mean = total / n;
  std::map<std::string, int> qf;
  for (const std::string& t : tokenize(query))
    if (!c.stop.contains(t)) ++qf[t];
  std::vector<double> score(c.docs.size(), 0.0);
  for (std::size_t i = 0; i < tf.size(); ++i) {
    double len = 0;
    for (const auto& [t, x] : tf[i]) len += x;
    for (const auto& [t, q] : qf) {
      const auto it = tf[i].find(t);
      if (it == tf[i].end()) continue;
      const double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
      const double f = it->second;
      score[i] += q * idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / mean));
    }
  }
  return score;
}

Index build(const Corpus& c, std::span<const RawDocument> docs) {
  BuildOptions o;
  o.stopwords = &c.stop;
  return Index::from_data(build_index_data(c.embeddings, {docs.begin(), docs.end()}, o));
}

SearchOptions bm25(double k1 = 1.2, double b = 0.75) {
  SearchOptions o;
  o.method = Method("bm25");
  o.direction = Direction::query_to_document;
  o.parameters.set("bm25_k1", k1);
  o.parameters.set("bm25_b", b);
  return o;
}

// Queries with words that have vectors, words that do not (w30..w39), repeats and stop words.
const std::vector<std::string> kQueries = {
    "w2", "w5 w31", "w3 w3 w17 w0", "w29 w39 w38", "w11 w12 w13 w14 w15 w36", "w2 w4 w6 w8"};

std::vector<RawDocument> as_docs(const std::vector<std::string>& texts) {
  std::vector<RawDocument> out;
  for (std::size_t q = 0; q < texts.size(); ++q)
    out.push_back({std::to_string(q), "", texts[q], q + 1});
  return out;
}

TEST(Bm25, EveryDistanceIsMinusTheDirectScore) {
  const Corpus c = corpus(150, 3);
  const Index ix = build(c, c.docs);
  const QuerySet qs = make_query_set(ix, as_docs(kQueries), {});
  ASSERT_EQ(qs.size(), kQueries.size());
  for (const auto& [k1, b] : {std::pair{1.2, 0.75}, {0.0, 0.0}, {2.0, 1.0}, {0.9, 0.4}}) {
    const std::vector<float> got = test::matrix(ix, qs, bm25(k1, b));
    for (std::size_t q = 0; q < qs.size(); ++q) {
      const std::vector<double> want = direct_bm25(c, kQueries[q], k1, b);
      for (std::size_t i = 0; i < ix.n_docs(); ++i)
        ASSERT_NEAR(-got[q * ix.n_docs() + i], want[i], 1e-5 * (1 + want[i]))
            << "query " << q << " doc " << i << " k1 " << k1 << " b " << b;
    }
  }
}

// A query of words without vectors has no histogram: excluded, unless kept for a lexical
// method, which ranks it by its terms alone.
TEST(Bm25, AQueryOfWordsWithoutVectorsIsKeptForBm25) {
  const Corpus c = corpus(100, 10);
  const Index ix = build(c, c.docs);
  const std::vector<std::string> texts = {"w35 w36", "w0 w1", "w4"};
  TextReport report;
  EXPECT_EQ(make_query_set(ix, as_docs(texts), {}, &report).size(), 1u);
  EXPECT_EQ(report.empty_documents, (std::vector<std::string>{"0", "1"}));
  QueryOptions keep;
  keep.keep_term_only = true;
  const QuerySet qs = make_query_set(ix, as_docs(texts), keep, &report);
  ASSERT_EQ(qs.size(), 2u) << "stop words alone leave no term";
  EXPECT_EQ(report.empty_documents, (std::vector<std::string>{"1"}));
  EXPECT_EQ(qs.length(0), 0u);
  const std::vector<float> got = test::matrix(ix, qs, bm25());
  const std::vector<double> want = direct_bm25(c, texts[0], 1.2, 0.75);
  for (std::size_t i = 0; i < ix.n_docs(); ++i) ASSERT_NEAR(-got[i], want[i], 1e-5 * (1 + want[i]));
  const SearchResults r = CpuSearcher(ix).search(qs, 3, bm25());
  EXPECT_GE(r.indices[0], 0);
}

TEST(Bm25, TopKIsTheMatchingDocumentsBestFirstTheSameInEveryBatch) {
  const Corpus c = corpus(150, 4);
  const Index ix = build(c, c.docs);
  const QuerySet qs = make_query_set(ix, as_docs(kQueries), {});
  const std::vector<float> all = test::matrix(ix, qs, bm25());
  const std::size_t n = ix.n_docs(), k = n;
  SearchResults first;
  for (const std::size_t batch : {0, 1, 4}) {
    SearchOptions o = bm25();
    o.batch = batch;
    const SearchResults r = CpuSearcher(ix).search(qs, k, o);
    for (std::size_t q = 0; q < qs.size(); ++q) {
      std::vector<std::size_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return all[q * n + a] < all[q * n + b];
      });
      std::size_t matching = 0;
      for (std::size_t i = 0; i < n; ++i) matching += all[q * n + i] < 0;
      for (std::size_t t = 0; t < k; ++t) {
        if (t < matching) {
          EXPECT_EQ(r.indices[q * k + t], static_cast<std::int64_t>(order[t])) << q << " " << t;
          EXPECT_EQ(r.distances[q * k + t], all[q * n + order[t]]);
        } else {
          EXPECT_EQ(r.indices[q * k + t], -1) << "a document sharing no term is not found";
        }
      }
    }
    if (batch == 0) first = r;
    EXPECT_EQ(r.distances, first.distances);
    EXPECT_EQ(r.indices, first.indices);
  }
  // "w2" is in every document; "w29 w39 w38" in a few.
  EXPECT_GE(first.indices[0 * k + k - 1], 0);
  EXPECT_EQ(first.indices[3 * k + k - 1], -1);
}

// One build's shards (each holding the whole build's terms and frequencies), their views
// (Index::shard) and shards built apart (frequencies summed over them) give the whole's bytes.
TEST(Bm25, ShardsGiveTheWholesDistances) {
  const Corpus c = corpus(90, 5);
  const Index whole = build(c, c.docs);
  const QuerySet qs = make_query_set(whole, as_docs(kQueries), {});
  const std::vector<float> want = test::matrix(whole, qs, bm25());
  const std::size_t n = whole.n_docs();
  const auto check = [&](const std::vector<const Index*>& parts, const char* what) {
    const SegmentSet set(parts);
    const QuerySet sq = set.make_query_set(as_docs(kQueries), {});
    const CollectionSearcher s(set, {});
    std::vector<float> got(qs.size() * n);
    s.pairwise(sq, bm25(), [&](std::size_t first, std::size_t rows, const float* d) {
      std::copy(d, d + rows * n, got.begin() + static_cast<std::ptrdiff_t>(first * n));
    });
    EXPECT_EQ(got, want) << what;
    const SearchResults a = CpuSearcher(whole).search(qs, 7, bm25());
    const SearchResults b = s.search(sq, 7, bm25());
    EXPECT_EQ(a.indices, b.indices) << what;
    EXPECT_EQ(a.distances, b.distances) << what;
  };
  std::vector<Index> split;
  for (const IndexData& d : split_index_data(whole.data(), 4)) split.push_back(Index::from_data(d));
  check({&split[0], &split[1], &split[2], &split[3]}, "one build's shards");
  const Index views[] = {whole.shard(0, 31), whole.shard(31, 32), whole.shard(32, n)};
  check({&views[0], &views[1], &views[2]}, "views");
  const std::span<const RawDocument> docs(c.docs);
  const Index apart[] = {build(c, docs.subspan(0, 40)), build(c, docs.subspan(40))};
  check({&apart[0], &apart[1]}, "built apart");
}

// A collection looks a term up in its largest shard by binary search and in the others by one
// hash lookup: each shard's own id, wherever it is held, once or several times.
TEST(Bm25, ACollectionFindsEachTermInEveryShard) {
  const Corpus c = corpus(90, 5);
  const Index whole = build(c, c.docs);
  std::vector<Index> split;
  for (const IndexData& d : split_index_data(whole.data(), 4)) split.push_back(Index::from_data(d));
  const SegmentSet set({&split[0], &split[1], &split[2], &split[3]});
  std::vector<std::uint32_t> ids(set.size());
  std::size_t shared = 0;
  for (std::size_t t = 0; t < whole.n_terms(); ++t) {
    const std::string_view term = whole.term(t);
    set.find_term(term, ids);
    std::size_t holders = 0;
    for (std::size_t s = 0; s < set.size(); ++s) {
      const auto want = split[s].find_term(term);
      EXPECT_EQ(ids[s], want.value_or(SegmentSet::kNoTerm)) << term << " in shard " << s;
      holders += want.has_value() ? 1 : 0;
    }
    EXPECT_GE(holders, 1u) << term;
    shared += holders > 1 ? 1 : 0;
  }
  EXPECT_GT(shared, 0u);
  set.find_term("no-such-term", ids);
  EXPECT_EQ(ids, std::vector<std::uint32_t>(set.size(), SegmentSet::kNoTerm));
  const SegmentSet one({&whole});
  std::vector<std::uint32_t> id(1);
  one.find_term(whole.term(3), id);
  EXPECT_EQ(id[0], 3u);
}

TEST(Bm25, TheLexicalPartRoundTripsAndIsChecked) {
  const Corpus c = corpus(60, 6);
  const Index ix = build(c, c.docs);
  ASSERT_TRUE(ix.has_terms());
  EXPECT_TRUE(ix.find_term("w35")) << "a word without a vector is a term";
  EXPECT_FALSE(ix.find_term("w0")) << "stop words are not";
  EXPECT_FALSE(ix.find_term("nope"));
  const std::string path = (test::temp_dir() / "bm25.idx").string();
  Index::save(ix.data(), path);
  const Index back = Index::load(path);
  const IndexData a = ix.data(), b = back.data();
  EXPECT_EQ(a.terms, b.terms);
  EXPECT_EQ(a.posting_docs, b.posting_docs);
  EXPECT_EQ(a.posting_counts, b.posting_counts);
  EXPECT_EQ(a.doc_lengths, b.doc_lengths);
  // A shard's lexical part: the whole's terms, its own postings, the whole's mean length.
  const IndexData part = ix.shard(10, 20).data();
  EXPECT_EQ(part.terms, a.terms);
  EXPECT_EQ(part.doc_lengths,
            std::vector<std::uint32_t>(a.doc_lengths.begin() + 10, a.doc_lengths.begin() + 20));
  EXPECT_EQ(Index::from_data(part).idf_length(), ix.idf_length());
  // A version-2 file (no terms) is refused, naming the command that rebuilds it.
  std::string bytes = test::read_file(path);
  const std::uint32_t two = 2;
  std::memcpy(bytes.data() + 8, &two, sizeof two);
  try {
    Index::from_bytes(bytes);
    FAIL() << "a version-2 image was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lcrwmd build"), std::string::npos) << e.what();
  }
  // Postings out of order are caught.
  IndexData bad = ix.data();
  std::swap(bad.posting_docs[bad.posting_indptr[0]], bad.posting_docs[bad.posting_indptr[0] + 1]);
  EXPECT_THROW(Index::from_data(bad), Error);
}

TEST(Bm25, OptionsAndDirections) {
  const Corpus c = corpus(30, 7);
  const Index ix = build(c, c.docs);
  const QuerySet qs = make_query_set(ix, as_docs(kQueries), {});
  const CpuSearcher s(ix);
  EXPECT_EQ(Method("bm25")->default_direction(), Direction::query_to_document);
  EXPECT_EQ(Method("lc-rwmd")->default_direction(), Direction::symmetric);
  SearchOptions o = bm25();
  o.direction = Direction::symmetric;
  EXPECT_THROW(s.search(qs, 3, o), OptionError);
  for (const auto& [k1, b] : {std::pair{-0.1, 0.75}, {1.2, 1.5}, {1.2, -0.1}, {NAN, 0.5}}) {
    try {
      s.search(qs, 3, bm25(k1, b));
      FAIL() << k1 << " " << b;
    } catch (const OptionError& e) {
      EXPECT_EQ(e.option(), k1 == 1.2 ? "bm25_b" : "bm25_k1");
    }
  }
  // An index assembled without terms: bm25 says so.
  const Index bare = Index::from_data(test::random_index(20, 30, 4, 5, 8));
  const QuerySet bq = test::mixed_queries(bare, 0, 9);
  EXPECT_THROW(CpuSearcher(bare).search(bq, 3, bm25()), Error);
  // Documents of the index as queries carry their terms: as their texts would.
  const std::size_t docs[] = {9, 4};
  const QuerySet texts = make_query_set(ix, {c.docs[9], c.docs[4]}, {});
  EXPECT_EQ(test::matrix(ix, query_set_from_index(ix, docs, true), bm25()),
            test::matrix(ix, texts, bm25()));
}

// hybrid: bm25's scores and lc-rwmd's query-to-document distances (each checked against its own
// reference), standardised over the documents and summed, recomputed here in double.
TEST(Hybrid, TheStandardisedSumOfBm25AndQueryToDocument) {
  const Corpus c = corpus(120, 8);
  const Index ix = build(c, c.docs);
  const QuerySet qs = make_query_set(ix, as_docs(kQueries), {});
  const std::size_t n = ix.n_docs();
  const std::vector<float> score = test::matrix(ix, qs, bm25());
  SearchOptions q2d;
  q2d.direction = Direction::query_to_document;
  const std::vector<float> dist = test::matrix(ix, qs, q2d);
  const auto z = [&](const std::vector<float>& m, std::size_t q, double sign) {
    double mean = 0, sq = 0;
    for (std::size_t i = 0; i < n; ++i) mean += sign * m[q * n + i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) sq += std::pow(sign * m[q * n + i] - mean, 2);
    const double sd = std::sqrt(sq / static_cast<double>(n));
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = sd > 0 ? (sign * m[q * n + i] - mean) / sd : 0;
    return out;
  };
  for (const double w : {0.3, 0.0, 2.0}) {
    SearchOptions o;
    o.method = Method("hybrid");
    o.direction = Direction::query_to_document;
    o.parameters.set("hybrid_weight", w);
    const std::vector<float> got = test::matrix(ix, qs, o);
    for (std::size_t q = 0; q < qs.size(); ++q) {
      const std::vector<double> zs = z(score, q, -1.0), zd = z(dist, q, 1.0);
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[q * n + i], w * zd[i] - zs[i], 1e-4) << w << " " << q << " " << i;
    }
    test::expect_topk_matches_sort(CpuSearcher(ix), qs, o);
  }
  // Every document's distance the bulk way (the word distances made exact, no document
  // refined) and, with no room to keep those, a document at a time: the same bits, and within
  // rounding of quadratic RWMD's, computed pair by pair.
  SearchOptions rwmd = q2d;
  rwmd.method = Method("rwmd");
  const std::vector<float> pairs = test::matrix(ix, qs, rwmd);
  for (std::size_t e = 0; e < pairs.size(); ++e) ASSERT_NEAR(dist[e], pairs[e], 1e-5) << e;
  CpuOptions cramped;
  cramped.memory_budget = 1;
  const auto matrix = [&](const CpuOptions& cpu, SearchStats& stats) {
    std::vector<float> m(qs.size() * n);
    SearchOptions o;
    o.method = Method("hybrid");
    o.direction = Direction::query_to_document;
    CpuSearcher(ix, cpu).pairwise(
        qs, o,
        [&](std::size_t first, std::size_t rows, const float* d) {
          std::copy(d, d + rows * n, m.begin() + static_cast<std::ptrdiff_t>(first * n));
        },
        &stats);
    return m;
  };
  SearchStats bulk, each;
  EXPECT_EQ(matrix({}, bulk), matrix(cramped, each));
  const std::set<std::uint32_t> words(qs.words.begin(), qs.words.end());
  EXPECT_EQ(bulk.recomputed, ix.vocab_size() * words.size());  // every pair, once
  EXPECT_LT(each.recomputed, bulk.recomputed);
  // Over several shards, standardised over all of them: one index's neighbours and distances
  // (the sums' last bits aside), ranked and as a matrix.
  std::vector<Index> parts;
  for (const IndexData& d : split_index_data(ix.data(), 3)) parts.push_back(Index::from_data(d));
  SearchOptions o;
  o.method = Method("hybrid");
  o.direction = Direction::query_to_document;
  const SegmentSet three({&parts[0], &parts[1], &parts[2]});
  const QuerySet q3 = three.make_query_set(as_docs(kQueries), {});
  const SearchResults a = CollectionSearcher(three, {}).search(q3, 7, o);
  const SearchResults b = CpuSearcher(ix).search(qs, 7, o);
  EXPECT_EQ(a.indices, b.indices);
  for (std::size_t e = 0; e < a.distances.size(); ++e)
    ASSERT_NEAR(a.distances[e], b.distances[e], 1e-5) << e;
  const std::vector<float> whole = test::matrix(ix, qs, o);
  std::vector<float> split(whole.size());
  CollectionSearcher(three, {}).pairwise(
      q3, o,
      [&](std::size_t first, std::size_t rows, const float* d) {
        std::copy(d, d + rows * n, split.begin() + static_cast<std::ptrdiff_t>(first * n));
      },
      nullptr);
  for (std::size_t e = 0; e < whole.size(); ++e) ASSERT_NEAR(split[e], whole[e], 1e-5) << e;
  o.parameters.set("hybrid_weight", -1);
  EXPECT_THROW(CpuSearcher(ix).search(qs, 3, o), OptionError);
}

// The walk (Bm25Scorer::top_k) against the k best of score()'s rows, scored in full: the same
// documents, scores and order of ties.

// Documents of `c` and copies of some of them (equal scores: ties), and queries of one to nine
// words: shared, rare, repeated, stop words and words no document holds.
std::vector<RawDocument> with_copies(const Corpus& c, std::size_t copies, unsigned seed) {
  std::vector<RawDocument> docs = c.docs;
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < copies; ++i) {
    RawDocument d = c.docs[rng() % c.docs.size()];
    d.id = "copy" + std::to_string(i);
    docs.insert(docs.begin() + static_cast<std::ptrdiff_t>(rng() % docs.size()), d);
  }
  return docs;
}

QueryOptions term_queries() {  // queries of words without vectors kept too
  QueryOptions o;
  o.keep_term_only = true;
  return o;
}

std::vector<std::string> walk_queries(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out = kQueries;
  out.push_back("nothing holds this");
  out.push_back("w39");
  while (out.size() < n) {
    std::string q;
    const std::size_t words = 1 + rng() % 9;
    for (std::size_t t = 0; t < words; ++t)
      q += test::numbered('w', static_cast<std::size_t>(rng() % (rng() % 2 ? 8 : 41))) + " ";
    out.push_back(q);
  }
  return out;
}

// The k best of query q's row of scores, scored in full, the deleted documents left out.
std::vector<Neighbor> every_posting_top_k(const Bm25Scorer& s, std::size_t q, std::size_t k,
                                          const std::vector<std::vector<std::uint32_t>>& deleted) {
  std::vector<double> score(s.n_docs());
  s.score(q, score.data(), 0, score.size());
  std::vector<float> d(score.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = bm25_distance(score[i]);
  for (std::size_t p = 0; p < deleted.size(); ++p)
    for (const std::uint32_t i : deleted[p])
      d[s.first(p) + i] = std::numeric_limits<float>::infinity();
  std::vector<Neighbor> top = select_topk(d, k);
  while (!top.empty() && !(top.back().distance < 0)) top.pop_back();
  return top;
}

void expect_same(const std::vector<Neighbor>& got, const std::vector<Neighbor>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t t = 0; t < got.size(); ++t) {
    EXPECT_EQ(got[t].index, want[t].index) << what << " rank " << t;
    EXPECT_EQ(got[t].distance, want[t].distance) << what << " rank " << t;
  }
}

// scores_at against score()'s row, bit for bit: every position; the first and the last; evenly
// spaced ones (the hybrid's sample, a posting list's stride and more); random ones, runs among
// them; none.
void expect_scores_at(const Bm25Scorer& s, std::size_t q, const std::string& what) {
  const std::size_t n = s.n_docs();
  std::vector<double> row(n);
  s.score(q, row.data(), 0, n);
  std::mt19937 rng(static_cast<std::uint32_t>(q));
  std::vector<std::vector<std::uint32_t>> sets{{}, {0}, {static_cast<std::uint32_t>(n - 1)}};
  for (const std::size_t m : {std::size_t{1}, std::size_t{7}, std::size_t{100}, n}) {
    std::vector<std::uint32_t> even;
    for (std::size_t r = 0; r < std::min(m, n); ++r)
      even.push_back(static_cast<std::uint32_t>(r * n / std::min(m, n)));
    sets.push_back(even);
  }
  std::vector<std::uint32_t> random;
  for (std::uint32_t i = 0; i < n; ++i)
    if (rng() % 9 == 0 || (i > n / 2 && i < n / 2 + 40)) random.push_back(i);
  sets.push_back(random);
  std::size_t nonzero = 0;
  for (const std::vector<std::uint32_t>& positions : sets) {
    const std::vector<double> got = s.scores_at(q, positions);
    ASSERT_EQ(got.size(), positions.size());
    for (std::size_t t = 0; t < positions.size(); ++t) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got[t]),
                std::bit_cast<std::uint64_t>(row[positions[t]]))
          << what << " position " << positions[t];
      nonzero += got[t] != 0;
    }
  }
  // Not vacuous where the query's words are in any document.
  if (std::any_of(row.begin(), row.end(), [](double x) { return x != 0; })) {
    EXPECT_GT(nonzero, 0u) << what;
  }
}

// Blocks of a given size made for each (part, term) once: the walk's blocks_of.
struct BlocksOfSize {
  std::vector<const Index*> parts;
  std::size_t size;
  std::map<std::pair<std::size_t, std::uint32_t>, PostingBlocks> made;
  const PostingBlocks& operator()(std::size_t part, std::uint32_t term) {
    auto it = made.find({part, term});
    if (it == made.end())
      it = made.emplace(std::pair{part, term},
                        make_posting_blocks(*parts[part], parts[part]->postings(term), size))
               .first;
    return it->second;
  }
};

TEST(Bm25Walk, FindsWhatScoringEveryPostingRanksWithAnyBlockSize) {
  const Corpus c = corpus(700, 21);
  const Index ix = build(c, with_copies(c, 300, 22));
  const std::vector<std::string> texts = walk_queries(40, 23);
  const QuerySet qs = make_query_set(ix, as_docs(texts), term_queries());
  ASSERT_GE(qs.size(), texts.size() - 2);
  const Bm25Scorer scorer(ix, qs, 0, qs.size(), 1.2, 0.75);
  std::size_t pruned = 0, ties = 0;
  for (const std::size_t size : {1, 2, 127, 128, 129, 100000}) {
    BlocksOfSize blocks{{&ix}, size, {}};
    const Bm25Scorer::BlocksOf blocks_of = std::ref(blocks);
    for (std::size_t q = 0; q < qs.size(); ++q)
      for (const std::size_t k : {1, 3, 10, 1000, 5000}) {
        const std::vector<Neighbor> want = every_posting_top_k(scorer, q, k, {});
        Bm25Scorer::TopKCounts counts;
        expect_same(scorer.top_k(q, k, std::numeric_limits<float>::infinity(), &counts, blocks_of),
                    want,
                    "'" + texts[std::stoul(qs.ids[q])] + "' k " + std::to_string(k) +
                        " blocks of " + std::to_string(size));
        pruned += counts.scored < counts.documents;
        for (std::size_t t = 1; t < want.size(); ++t)
          ties += want[t].distance == want[t - 1].distance;
      }
  }
  EXPECT_GT(pruned, 100u) << "the walk scored every document it met";
  EXPECT_GT(ties, 100u) << "no ties to break";
  // The index's own blocks, through the searcher, and a range: the same.
  for (const float range : {std::numeric_limits<float>::infinity(), -3.0f}) {
    SearchOptions o = bm25();
    o.max_distance = range;
    const SearchResults r = CpuSearcher(ix).search(qs, 10, o);
    for (std::size_t q = 0; q < qs.size(); ++q) {
      std::vector<Neighbor> want = every_posting_top_k(scorer, q, 10, {});
      while (!want.empty() && !(want.back().distance <= range)) want.pop_back();
      for (std::size_t t = 0; t < 10; ++t) {
        EXPECT_EQ(r.indices[q * 10 + t], t < want.size() ? want[t].index : -1) << q << " " << t;
        if (t < want.size()) {
          EXPECT_EQ(r.distances[q * 10 + t], want[t].distance);
        }
      }
    }
  }
}

// Windows of more documents than the walk takes at a time (4,096): one block for every
// posting makes one window of the whole index, and blocks of 129 postings of a common word
// span several strips; the strips' edges fall inside both.
TEST(Bm25Walk, WindowsLongerThanAStripFindTheSame) {
  const Corpus c = corpus(9000, 61);
  const Index ix = build(c, c.docs);
  const std::vector<std::string> texts = walk_queries(30, 62);
  const QuerySet qs = make_query_set(ix, as_docs(texts), term_queries());
  const Bm25Scorer scorer(ix, qs, 0, qs.size(), 1.2, 0.75);
  std::size_t pruned = 0;
  for (const std::size_t size : {129, 1000000}) {
    BlocksOfSize blocks{{&ix}, size, {}};
    const Bm25Scorer::BlocksOf blocks_of = std::ref(blocks);
    for (std::size_t q = 0; q < qs.size(); ++q)
      for (const std::size_t k : {1, 10, 5000}) {
        Bm25Scorer::TopKCounts counts;
        expect_same(scorer.top_k(q, k, std::numeric_limits<float>::infinity(), &counts, blocks_of),
                    every_posting_top_k(scorer, q, k, {}),
                    "'" + texts[std::stoul(qs.ids[q])] + "' k " + std::to_string(k) +
                        " blocks of " + std::to_string(size));
        pruned += counts.scored < counts.documents;
      }
  }
  EXPECT_GT(pruned, 20u) << "the walk scored every document it met";
  for (std::size_t q = 0; q < qs.size(); ++q)
    expect_scores_at(scorer, q, texts[std::stoul(qs.ids[q])]);
}

// Several segments with deleted documents (whole blocks of them too), and a segment whose lists
// of a query's term are empty: one top-k over the live documents.
TEST(Bm25Walk, OverSegmentsLeavesOutTheDeleted) {
  const Corpus c = corpus(900, 31);
  const std::vector<RawDocument> docs = with_copies(c, 200, 32);
  const std::span<const RawDocument> all(docs);
  // Built apart, as a collection's segments are; one of a single document.
  const Index apart[] = {build(c, all.subspan(0, 500)), build(c, all.subspan(500, 1)),
                         build(c, all.subspan(501, 300)), build(c, all.subspan(801))};
  std::mt19937 rng(33);
  for (const std::vector<const Index*>& parts :
       {std::vector<const Index*>{&apart[0], &apart[2]},
        std::vector<const Index*>{&apart[0], &apart[1], &apart[2], &apart[3]}}) {
    std::vector<std::vector<std::uint32_t>> deleted(parts.size());
    for (std::size_t p = 0; p < parts.size(); ++p) {
      for (std::uint32_t i = 0; i < parts[p]->n_docs(); ++i)
        if (rng() % 5 == 0 || (p == 0 && i < 300)) deleted[p].push_back(i);
    }
    const std::vector<std::span<const std::uint32_t>> spans(deleted.begin(), deleted.end());
    const SegmentSet set(parts, spans);
    const std::vector<std::string> texts = walk_queries(30, 34);
    const QuerySet qs = set.make_query_set(as_docs(texts), term_queries());
    const Bm25Scorer scorer(set, qs, 0, qs.size(), 1.2, 0.75);
    for (const std::size_t size : {1, 2, 128, 129}) {
      BlocksOfSize blocks{parts, size, {}};
      const Bm25Scorer::BlocksOf blocks_of = std::ref(blocks);
      for (std::size_t q = 0; q < qs.size(); ++q)
        for (const std::size_t k : {1, 10, 2000})
          expect_same(
              scorer.top_k(q, k, std::numeric_limits<float>::infinity(), nullptr, blocks_of),
              every_posting_top_k(scorer, q, k, deleted),
              texts[std::stoul(qs.ids[q])] + " k " + std::to_string(k) + " blocks of " +
                  std::to_string(size));
    }
    for (std::size_t q = 0; q < qs.size(); ++q)
      expect_scores_at(scorer, q, texts[std::stoul(qs.ids[q])]);
    // The collection's searcher: its documents numbered without the deleted ones.
    const CollectionSearcher searcher(set, {});
    const SearchResults r = searcher.search(qs, 10, bm25());
    for (std::size_t q = 0; q < qs.size(); ++q) {
      const std::vector<Neighbor> want = every_posting_top_k(scorer, q, 10, deleted);
      for (std::size_t t = 0; t < 10; ++t) {
        if (t >= want.size()) {
          EXPECT_EQ(r.indices[q * 10 + t], -1);
          continue;
        }
        const auto [s, i] = scorer.locate(static_cast<std::size_t>(want[t].index));
        EXPECT_EQ(r.indices[q * 10 + t], static_cast<std::int64_t>(set.collection_doc(s, i)));
        EXPECT_EQ(r.distances[q * 10 + t], want[t].distance);
      }
    }
  }
}

// Term t's postings as plain arrays, as a PostingReader reads them.
struct PlainPostings {
  std::vector<std::uint32_t> docs, counts;
  std::uint32_t first = 0;
  std::size_t size = 0;
};
PlainPostings plain(const Index& ix, std::size_t t) {
  PostingReader r(ix.postings(t));
  PlainPostings p{{}, {}, r.first(), r.size()};
  for (std::size_t e = 0; e < r.size(); ++e) {
    p.docs.push_back(r.doc(e));
    p.counts.push_back(r.count(e));
  }
  return p;
}

// How many postings of `blocks` an impact of their block fails to bound: more often in the
// document, or in a shorter one; and under the walk's arithmetic (`bound` of a block's
// impacts), how many contributions exceed their block's bound.
std::size_t unbounded(const Index& ix, std::uint32_t term, const PostingBlocks& blocks) {
  const PlainPostings post = plain(ix, term);
  std::size_t bad = 0;
  for (std::size_t e = 0; e < post.size; ++e) {
    const std::size_t b = e / blocks.block_size;
    const std::uint32_t length = ix.doc_length(post.docs[e] - post.first);
    bool held = false;
    for (const Impact& i : blocks.block(b)) held |= i.count >= post.counts[e] && i.length <= length;
    bad += !held;
  }
  return bad;
}
template <typename Bound>
std::size_t over_bound(const Bm25Scorer& s, const Index& ix, std::uint32_t term,
                       const PostingBlocks& blocks, double w, const Bound& bound) {
  const PlainPostings post = plain(ix, term);
  std::size_t bad = 0;
  for (std::size_t e = 0; e < post.size; ++e) {
    double m = 0;
    for (const Impact& i : blocks.block(e / blocks.block_size))
      m = std::max(m, s.contribution(w, i.count, i.length));
    bad += s.contribution(w, post.counts[e], ix.doc_length(post.docs[e] - post.first)) > bound(m);
  }
  return bad;
}

// A block's impacts are exactly the Pareto front of its postings' (count, length) pairs, counts
// descending, as a plain sort and scan finds it: with counts past the small ones a block keeps a
// least for (documents holding a word up to 200 times), and equal counts and lengths.
TEST(Bm25Walk, EachBlocksImpactsAreItsPostingsFront) {
  Corpus c = corpus(700, 43);
  std::mt19937 rng(44);
  for (RawDocument& d : c.docs)
    for (std::size_t r = rng() % 3 == 0 ? rng() % 200 : 0; r > 0; --r) d.text += " w3";
  const Index ix = build(c, c.docs);
  std::size_t large = 0;
  for (const std::size_t size : {1, 2, 127, 128, 129})
    for (std::uint32_t t = 0; t < ix.n_terms(); ++t) {
      const PlainPostings post = plain(ix, t);
      const PostingBlocks blocks = make_posting_blocks(ix, ix.postings(t), size);
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        std::vector<Impact> pairs;
        for (std::size_t e = b * size; e < std::min(post.size, (b + 1) * size); ++e) {
          pairs.push_back({post.counts[e], ix.doc_length(post.docs[e] - post.first)});
          large += post.counts[e] >= 64;
        }
        std::sort(pairs.begin(), pairs.end(), [](const Impact& x, const Impact& y) {
          return x.count != y.count ? x.count > y.count : x.length < y.length;
        });
        std::vector<std::pair<std::uint32_t, std::uint32_t>> want, got;
        for (const Impact& p : pairs)
          if (want.empty() || p.length < want.back().second) want.emplace_back(p.count, p.length);
        for (const Impact& i : blocks.block(b)) got.emplace_back(i.count, i.length);
        ASSERT_EQ(got, want) << ix.term(t) << " block " << b << " of " << size;
      }
    }
  EXPECT_GT(large, 100u);  // the sorted path was taken
}

TEST(Bm25Walk, EachBlocksImpactsBoundItsPostingsAndAreTheirs) {
  const Corpus c = corpus(600, 41);
  const Index ix = build(c, with_copies(c, 100, 42));
  const QuerySet qs = make_query_set(ix, as_docs({"w2 w3 w9 w30"}), {});
  const Bm25Scorer scorer(ix, qs, 0, 1, 1.2, 0.75);
  std::size_t lowered = 0;
  for (const std::size_t size : {1, 2, 127, 128, 129}) {
    for (std::uint32_t t = 0; t < ix.n_terms(); ++t) {
      const PlainPostings post = plain(ix, t);
      const PostingBlocks blocks = make_posting_blocks(ix, ix.postings(t), size);
      ASSERT_EQ(blocks.size(), (post.size + size - 1) / size);
      EXPECT_EQ(unbounded(ix, t, blocks), 0u) << ix.term(t);
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const std::size_t end = std::min(post.size, (b + 1) * size);
        EXPECT_EQ(blocks.last[b], post.docs[end - 1]);
        EXPECT_EQ(blocks.first[b], post.docs[b * size]);
        for (const Impact& i : blocks.block(b)) {  // each impact is a posting of its block
          bool found = false;
          for (std::size_t e = b * size; e < end; ++e)
            found |=
                post.counts[e] == i.count && ix.doc_length(post.docs[e] - post.first) == i.length;
          EXPECT_TRUE(found) << ix.term(t) << " block " << b;
        }
      }
      // The walk's bound of a block is reached by one of its postings and exceeded by none;
      // lowered by one ulp, some posting exceeds it.
      const double w = 2.5;
      EXPECT_EQ(over_bound(scorer, ix, t, blocks, w, [](double m) { return m; }), 0u);
      lowered +=
          over_bound(scorer, ix, t, blocks, w, [](double m) { return std::nextafter(m, 0.0); });
      // A sabotaged block: its best impact lowered by one occurrence (or one token longer).
      PostingBlocks bad = blocks;
      Impact& best = bad.impacts[bad.impact_begin[bad.size() / 2]];
      if (best.count > 1)
        --best.count;
      else
        ++best.length;
      EXPECT_GT(unbounded(ix, t, bad), 0u) << ix.term(t);
    }
  }
  EXPECT_GT(lowered, 0u);
}

// The walk run on sabotaged blocks (each block's impacts one occurrence fewer, or one token
// longer) misses documents: the tests above would fail with a bound too low.
TEST(Bm25Walk, ABoundTooLowLosesDocuments) {
  const Corpus c = corpus(700, 51);
  const Index ix = build(c, with_copies(c, 100, 52));
  const std::vector<std::string> texts = walk_queries(30, 53);
  const QuerySet qs = make_query_set(ix, as_docs(texts), term_queries());
  const Bm25Scorer scorer(ix, qs, 0, qs.size(), 1.2, 0.75);
  // Each block's impacts lowered, or only the whole list's (which bound the lists that end no
  // window): either loses documents.
  for (const bool whole : {false, true}) {
    std::map<std::uint32_t, PostingBlocks> made;
    const Bm25Scorer::BlocksOf sabotaged = [&](std::size_t,
                                               std::uint32_t term) -> const PostingBlocks& {
      auto it = made.find(term);
      if (it != made.end()) return it->second;
      PostingBlocks b = make_posting_blocks(ix, ix.postings(term), 2);
      for (Impact& i : whole ? b.whole : b.impacts) {
        if (i.count > 1)
          --i.count;
        else
          ++i.length;
      }
      return made.emplace(term, std::move(b)).first->second;
    };
    std::size_t differ = 0;
    for (std::size_t q = 0; q < qs.size(); ++q)
      for (const std::size_t k : {1, 3, 10, 30, 100}) {
        const std::vector<Neighbor> want = every_posting_top_k(scorer, q, k, {});
        const std::vector<Neighbor> got =
            scorer.top_k(q, k, std::numeric_limits<float>::infinity(), nullptr, sabotaged);
        bool same = got.size() == want.size();
        for (std::size_t t = 0; same && t < got.size(); ++t) same = got[t].index == want[t].index;
        differ += !same;
      }
    EXPECT_GT(differ, 0u) << (whole ? "the whole lists' impacts" : "the blocks' impacts");
  }
}

// ---- the hybrid's bounded top-k ---------------------------------------------------------

// A vocabulary of 600 words with vectors (8-d) and 40 without, Zipf-like, and 40 copies of
// one document (ties); queries of one to four words, rare and common.
Corpus wide_corpus(std::size_t n, unsigned seed) {
  return corpus_of(n, seed, {600, 8, 640, 30, true, 40});
}

// n queries of wide_corpus: a few fixed (one no document holds, two without vectors), then one
// to four words, rare and common.
std::vector<std::string> wide_queries(std::size_t n, std::mt19937& rng) {
  std::vector<std::string> texts = {"w17 w40", "nothing holds this", "w630 w631", "w2"};
  while (texts.size() < n) {
    std::string q;
    for (std::size_t t = 0, words = 1 + rng() % 4; t < words; ++t)
      q += test::numbered('w', 20 + rng() % 620) + " ";
    texts.push_back(q);
  }
  return texts;
}

SearchOptions hybrid(double weight, std::size_t sample) {
  SearchOptions o;
  o.method = Method("hybrid");
  o.direction = Direction::query_to_document;
  o.parameters.set("hybrid_weight", weight);
  o.parameters.set("hybrid_sample", static_cast<double>(sample));
  return o;
}

// The distances and the scores standardised over the sample (evenly spaced ranks): recomputed
// here in double from bm25's and query-to-document's own rows.
TEST(Hybrid, BothHalvesAreStandardisedOverTheSample) {
  const Corpus c = wide_corpus(600, 31);
  const Index ix = build(c, c.docs);
  const std::size_t n = ix.n_docs();
  const QuerySet qs = make_query_set(ix, as_docs({"w40 w41", "w7", "w300 w2 w639", "w500"}), {});
  const std::vector<float> score = test::matrix(ix, qs, bm25());
  SearchOptions q2d;
  q2d.direction = Direction::query_to_document;
  const std::vector<float> dist = test::matrix(ix, qs, q2d);
  for (const std::size_t sample : {std::size_t{7}, std::size_t{100}, std::size_t{0}}) {
    const std::size_t m = sample == 0 ? n : sample;
    const std::vector<float> got = test::matrix(ix, qs, hybrid(0.5, sample));
    for (std::size_t q = 0; q < qs.size(); ++q) {
      double sm = 0, ss = 0, dm = 0, ds = 0;
      for (std::size_t r = 0; r < m; ++r) sm -= score[q * n + r * n / m];
      sm /= static_cast<double>(m);
      for (std::size_t r = 0; r < m; ++r) ss += std::pow(-score[q * n + r * n / m] - sm, 2);
      ss = ss > 0 ? std::sqrt(ss / static_cast<double>(m)) : 1.0;
      for (std::size_t r = 0; r < m; ++r) dm += dist[q * n + r * n / m];
      dm /= static_cast<double>(m);
      for (std::size_t r = 0; r < m; ++r) ds += std::pow(dist[q * n + r * n / m] - dm, 2);
      ds = std::sqrt(ds / static_cast<double>(m));
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[q * n + i],
                    0.5 * (dist[q * n + i] - dm) / ds - (-score[q * n + i] - sm) / ss, 1e-4)
            << sample << " " << q << " " << i;
    }
  }
}

// The bounded top-k (both lists walked until no other document can enter) against every
// document's row (prune off): the same documents, distances and order of ties, for queries of
// one to four words (words without vectors, words no document holds), k from 1 to past where the
// walk hands over to the rows, left-out documents, a range, sample sizes and weights; most of
// the short queries walked.
TEST(Hybrid, BoundedTopKFindsWhatEveryRowRanks) {
  const Corpus c = wide_corpus(3000, 32);
  const Index ix = build(c, c.docs);
  const std::size_t n = ix.n_docs();
  std::mt19937 rng(33);
  const std::vector<std::string> texts = wide_queries(24, rng);
  const QuerySet qs = make_query_set(ix, as_docs(texts), term_queries());
  std::vector<std::uint32_t> skip;  // every third document and a run of the copies
  for (std::uint32_t i = 0; i < n; ++i)
    if (i % 3 == 0 || (i >= 3000 && i < 3020)) skip.push_back(i);
  for (const std::size_t batch : {std::size_t{1}, std::size_t{0}}) {
    const CpuSearcher s(ix, {std::size_t{1} << 30, batch ? 7u : 0u, batch ? 5u : 0u});
    for (const auto& [weight, sample] :
         {std::pair{0.3, std::size_t{1024}}, {2.0, std::size_t{0}}, {0.0, std::size_t{5}}})
      for (const std::size_t k : {1u, 3u, 10u, 100u})
        for (const int variant : {0, 1, 2}) {
          SearchOptions walk = hybrid(weight, sample);
          walk.batch = batch;
          if (variant == 1) walk.skip = skip;
          if (variant == 2) walk.max_distance = -1.0f;
          SearchOptions every = walk;
          every.prune = false;
          SearchStats st;
          const SearchResults got = s.search(qs, k, walk, &st), want = s.search(qs, k, every);
          const std::string what = "k " + std::to_string(k) + " variant " +
                                   std::to_string(variant) + " weight " + std::to_string(weight) +
                                   " batch " + std::to_string(batch);
          ASSERT_EQ(got.indices, want.indices) << what;
          ASSERT_EQ(got.distances, want.distances) << what;
          if (k <= 10) {
            EXPECT_GT(st.walked, qs.size() / 2) << what;
          }
        }
  }
}

// The fused walk over synthetic lists against fusing every document: scores and distances
// with many ties (scores apart by less than a float's step, which the lexical list's floats
// round alike), documents sharing no term (score 0),
// left-out documents, distance weights from 0 (bm25's ranking) to one that outweighs the
// score, a ceiling, k from 1 to past the documents; the distance walk asked for those below
// its `below` only. Most cases' distance walk is bounded by the lexical list's k-th best.
TEST(FusedWalk, FindsWhatFusingEveryDocumentRanks) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(97);
  std::size_t bounded = 0, cases = 0;
  for (const std::size_t n : {0u, 1u, 7u, 40u, 300u, 2000u})
    for (int trial = 0; trial < 12; ++trial) {
      std::vector<double> score(n);
      std::vector<float> distance(n);
      std::vector<bool> live(n);
      for (std::size_t i = 0; i < n; ++i) {
        // A score's float shared by neighbours in double; a third share no term.
        score[i] = rng() % 3 == 0 ? 0.0
                                  : static_cast<double>(rng() % 20) * 0.25 +
                                        static_cast<double>(rng() % 4) * 0x1p-24;
        distance[i] = static_cast<float>(rng() % 64) / 16.0f;
        live[i] = rng() % 5 != 0;
      }
      const std::vector<double> weights = {0.0, 0.3, 2.0, 50.0};
      const HybridScale z{.score_mean = 1.0 + static_cast<double>(rng() % 5) * 0.1,
                          .score_sd = trial % 3 == 2 ? 1e-6 : 1.5,  // or a float step's weight
                          .distance_mean = 2.0,
                          .distance_sd = 0.5 + static_cast<double>(rng() % 3) * 0.25,
                          .weight = weights[trial % 4]};
      std::vector<std::uint32_t> by_score, by_distance;
      for (std::uint32_t i = 0; i < n; ++i)
        if (live[i]) {
          if (score[i] > 0) by_score.push_back(i);
          by_distance.push_back(i);
        }
      std::stable_sort(by_score.begin(), by_score.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return score[a] > score[b]; });
      std::stable_sort(by_distance.begin(), by_distance.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return distance[a] < distance[b]; });
      const auto lexical = [&](std::size_t depth) {
        std::vector<Neighbor> top;
        for (std::size_t r = 0; r < by_score.size() && r < depth; ++r)
          top.push_back({static_cast<float>(-score[by_score[r]]), by_score[r]});
        return top;
      };
      bool below_finite = false;
      const auto nearest = [&](std::size_t depth, float below) {
        below_finite = below_finite || below < kInf;
        BatchDistance::Walked w;
        for (std::size_t r = 0; r < by_distance.size() && w.top.size() < depth; ++r)
          if (distance[by_distance[r]] < below)
            w.top.push_back({distance[by_distance[r]], by_distance[r]});
        w.computed = w.top.size();
        return std::optional(w);
      };
      const auto distances = [&](std::span<const std::uint32_t> positions, float* out) {
        ASSERT_TRUE(std::is_sorted(positions.begin(), positions.end()));
        for (std::size_t i = 0; i < positions.size(); ++i) out[i] = distance[positions[i]];
      };
      const auto score_of = [&](std::size_t i) { return score[i]; };
      for (const std::size_t k : {1u, 3u, 10u, 40u, 2500u})
        for (const bool range : {false, true}) {
          // Every live document fused, the best k below the ceiling.
          const float ceiling = range ? z.fuse(2.0f, 2.0) : kInf;
          TopK all(k);
          for (std::uint32_t i = 0; i < n; ++i) {
            const Neighbor h{z.fuse(distance[i], score[i]), i};
            if (live[i] && h.distance < ceiling) all.push(h);
          }
          const std::vector<Neighbor> want = all.take_sorted();
          below_finite = false;
          const auto got = fused_walk(z, k, ceiling, nearest, lexical, distances, score_of);
          const std::string what = "n " + std::to_string(n) + " trial " + std::to_string(trial) +
                                   " k " + std::to_string(k) + (range ? " range" : "");
          ASSERT_TRUE(got) << what;
          ASSERT_EQ(got->top.size(), want.size()) << what;
          for (std::size_t r = 0; r < want.size(); ++r) {
            ASSERT_EQ(got->top[r].index, want[r].index) << what << " rank " << r;
            ASSERT_EQ(got->top[r].distance, want[r].distance) << what << " rank " << r;
          }
          ++cases;
          bounded += below_finite;
        }
    }
  EXPECT_GT(bounded, cases / 2);
  // A distance walk that gives up hands the query to the linear pass.
  const auto gives_up = [](std::size_t, float) { return std::optional<BatchDistance::Walked>(); };
  const auto none = [](std::size_t) { return std::vector<Neighbor>{}; };
  EXPECT_FALSE(fused_walk(
      HybridScale{}, 3, kInf, gives_up, none, [](std::span<const std::uint32_t>, float*) {},
      [](std::size_t) { return 0.0; }));
}

// A document off the lexical list may score above the float the list gives its last (the
// list's floats round: 3 + 2^-24 is 3.0f): the distance walk must look as far as such a
// document could lie. Forty documents of one score, the list's 32 far, one off it at distance 0.
TEST(FusedWalk, FindsADocumentScoringAboveTheListsLastFloat) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const double score = 3.0 + 0x1p-24;
  ASSERT_EQ(static_cast<double>(static_cast<float>(score)), 3.0);
  std::vector<float> distance(40, 2.0f);
  for (std::size_t i = 0; i < 32; ++i) distance[i] = 1.0f + static_cast<float>(i) / 64.0f;
  distance[35] = 0.0f;
  const HybridScale z{
      .score_mean = 3.0, .score_sd = 1e-9, .distance_mean = 0, .distance_sd = 1, .weight = 1};
  const auto lexical = [&](std::size_t depth) {
    std::vector<Neighbor> top;
    for (std::uint32_t i = 0; i < 40 && i < depth; ++i)
      top.push_back({static_cast<float>(-score), i});
    return top;
  };
  const auto nearest = [&](std::size_t depth, float below) {
    std::vector<Neighbor> all;
    for (std::uint32_t i = 0; i < 40; ++i)
      if (distance[i] < below) all.push_back({distance[i], i});
    std::sort(all.begin(), all.end());
    if (all.size() > depth) all.resize(depth);
    return std::optional(BatchDistance::Walked{all, all.size()});
  };
  const auto distances = [&](std::span<const std::uint32_t> positions, float* out) {
    for (std::size_t i = 0; i < positions.size(); ++i) out[i] = distance[positions[i]];
  };
  const auto got =
      fused_walk(z, 1, kInf, nearest, lexical, distances, [&](std::size_t) { return score; });
  ASSERT_TRUE(got);
  ASSERT_EQ(got->top.size(), 1u);
  EXPECT_EQ(got->top[0].index, 35);
  EXPECT_EQ(got->top[0].distance, z.fuse(0.0f, score));
}

// The least distance out is the first: a document there cannot enter, one a float nearer can
// (scales, scores and worsts at random, a ceiling or none, a top-k not yet full).
TEST(FusedWalk, TheLeastDistanceOutIsTheFirstFloatOut) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(98);
  std::uniform_real_distribution<double> u(0.0, 4.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const HybridScale z{.score_mean = u(rng),
                        .score_sd = 0.1 + u(rng),
                        .distance_mean = u(rng),
                        .distance_sd = 0.1 + u(rng),
                        .weight = trial % 7 == 0 ? 0.0 : u(rng)};
    const double score = u(rng);
    const float ceiling = trial % 3 == 0 ? kInf : static_cast<float>(u(rng) - 2.0);
    TopK best(2);
    if (trial % 5 != 0) best.push({static_cast<float>(u(rng) - 3.0), 1});
    if (trial % 5 > 1) best.push({static_cast<float>(u(rng) - 3.0), 2});
    const auto out = [&](float d) {
      const float f = z.fuse(d, score);
      return f >= ceiling || (best.full() && f > best.worst().distance);
    };
    const float d = least_distance_out(z, score, ceiling, best);
    const std::string what = "trial " + std::to_string(trial);
    if (d < kInf) {
      ASSERT_TRUE(out(d)) << what;
      ASSERT_TRUE(out(std::nextafter(d, kInf))) << what;
      if (d > 0) {
        ASSERT_FALSE(out(std::nextafter(d, 0.0f))) << what;
      }
    } else {
      ASSERT_FALSE(out(std::numeric_limits<float>::max())) << what;
    }
  }
}

// Bounds with ties, distances at or above them (some equal): each depth, asked deeper and
// deeper of the same documents, gets what sorting every distance gives, each refined once.
TEST(ByBound, FindsTheLeastDistancesAsDeepAsAskedRefiningEachOnce) {
  std::mt19937 rng(71);
  for (const std::size_t n : {0u, 1u, 63u, 64u, 65u, 700u}) {
    std::vector<float> bound(n), exact(n);
    for (std::size_t i = 0; i < n; ++i) {
      bound[i] = static_cast<float>(rng() % 8) / 2.0f;  // ties, runs of them longer than a chunk
      exact[i] = bound[i] + (rng() % 2 == 0 ? 0.0f : static_cast<float>(rng() % 8) / 2.0f);
    }
    std::vector<Neighbor> sorted;
    for (std::size_t i = 0; i < n; ++i) sorted.push_back({exact[i], static_cast<std::int64_t>(i)});
    std::sort(sorted.begin(), sorted.end());
    ByBound by;
    for (std::size_t i = 0; i < n; ++i)
      by.bound.push_back({bound[i], static_cast<std::int64_t>(i)});
    std::vector<int> refined(n, 0);
    for (const std::size_t depth : {1u, 5u, 32u, 128u, 1000u}) {
      const std::vector<Neighbor> got = by.top(depth, [&](std::size_t i) {
        ++refined[i];
        return exact[i];
      });
      const std::vector<Neighbor> want(sorted.begin(),
                                       sorted.begin() + std::min<std::ptrdiff_t>(depth, n));
      const auto pairs = [](const std::vector<Neighbor>& v) {
        std::vector<std::pair<float, std::int64_t>> p;
        for (const Neighbor& x : v) p.emplace_back(x.distance, x.index);
        return p;
      };
      ASSERT_EQ(pairs(got), pairs(want)) << "n " << n << " depth " << depth;
      if (n == 700 && depth == 128) {  // the bounds spared some
        EXPECT_LT(std::count(refined.begin(), refined.end(), 1), 600);
      }
    }
    for (std::size_t i = 0; i < n; ++i) ASSERT_LE(refined[i], 1) << i;
  }
}

// A collection's bounded top-k (each segment's walk, the lists merged, standardised over every
// live document) against its rows (prune off): the same documents, distances and ties, over
// segments built apart (one of a single document, too small to walk), with deletions and a
// range; for short queries, fewer distances computed than every document's.
TEST(Hybrid, ACollectionsWalkFindsWhatItsRowsRank) {
  const Corpus c = wide_corpus(2000, 35);
  const std::span<const RawDocument> all(c.docs);
  const Index apart[] = {build(c, all.subspan(0, 900)), build(c, all.subspan(900, 1)),
                         build(c, all.subspan(901, 700)), build(c, all.subspan(1601))};
  std::mt19937 rng(36);
  const std::vector<std::string> texts = wide_queries(16, rng);
  for (const bool deletions : {false, true}) {
    std::vector<std::vector<std::uint32_t>> deleted(4);
    for (std::size_t p = 0; p < 4 && deletions; ++p)
      for (std::uint32_t i = 0; i < apart[p].n_docs(); ++i)
        if (rng() % 4 == 0 || (p == 3 && i < 200)) deleted[p].push_back(i);
    const std::vector<std::span<const std::uint32_t>> spans(deleted.begin(), deleted.end());
    const SegmentSet set({&apart[0], &apart[1], &apart[2], &apart[3]}, spans);
    const QuerySet qs = set.make_query_set(as_docs(texts), term_queries());
    const CollectionSearcher searcher(set, {});
    for (const auto& [weight, sample] :
         {std::pair{0.3, std::size_t{1024}}, {2.0, std::size_t{50}}, {0.01, std::size_t{1024}}})
      for (const std::size_t k : {1u, 10u, 100u})
        for (const bool range : {false, true}) {
          SearchOptions walk = hybrid(weight, sample);
          if (range) walk.max_distance = -1.0f;
          SearchOptions every = walk;
          every.prune = false;
          SearchStats st;
          const SearchResults got = searcher.search(qs, k, walk, &st);
          const SearchResults want = searcher.search(qs, k, every);
          const std::string what = "k " + std::to_string(k) + " weight " + std::to_string(weight) +
                                   (deletions ? " deletions" : "") + (range ? " range" : "");
          ASSERT_EQ(got.indices, want.indices) << what;
          ASSERT_EQ(got.distances, want.distances) << what;
          EXPECT_EQ(st.walked, qs.size()) << what;
          if (k <= 10 && sample < 100) {  // fewer distances than every live document's
            EXPECT_LT(st.refined, qs.size() * set.n_docs() * 3 / 4) << what;
          }
        }
  }
}
// The same documents in an index file of the format before compressed postings (each
// posting's document and count in plain arrays) and stored in blocks: the same top-k, scores
// and sampled scores, bit for bit; whole, and as shards starting and ending inside blocks.
TEST(Bm25Walk, PlainAndStoredPostingsRankTheSame) {
  const Corpus c = corpus(3000, 81);
  BuildOptions o;
  o.stopwords = &c.stop;
  const std::vector<RawDocument> docs = with_copies(c, 200, 82);
  const IndexData data = build_index_data(c.embeddings, docs, o);
  const Index stored = Index::from_data(data);
  const std::vector<char> image = io::index_image(data, 4);
  const Index plain = Index::from_bytes(std::string(image.begin(), image.end()));
  ASSERT_LT(stored.lexical_bytes() * 2, plain.lexical_bytes());
  const std::vector<std::string> texts = walk_queries(40, 83);
  const std::size_t n = stored.n_docs();
  std::mt19937 rng(84);
  for (const auto& [b, e] :
       {std::pair<std::size_t, std::size_t>{0, n}, {129, n - 300}, {1000, 1001}}) {
    const Index sa = stored.shard(b, e), sb = plain.shard(b, e);
    const QuerySet qa = make_query_set(sa, as_docs(texts), term_queries());
    const QuerySet qb = make_query_set(sb, as_docs(texts), term_queries());
    const Bm25Scorer a(sa, qa, 0, qa.size(), 1.2, 0.75), p(sb, qb, 0, qb.size(), 1.2, 0.75);
    for (std::size_t q = 0; q < qa.size(); ++q) {
      const std::string what =
          "shard [" + std::to_string(b) + ", " + std::to_string(e) + ") query " + std::to_string(q);
      for (const std::size_t k : {1, 10, 100})
        expect_same(a.top_k(q, k, std::numeric_limits<float>::infinity(), nullptr, {}),
                    p.top_k(q, k, std::numeric_limits<float>::infinity(), nullptr, {}), what);
      std::vector<double> ra(e - b), rb(e - b);
      a.score(q, ra.data(), 0, ra.size());
      p.score(q, rb.data(), 0, rb.size());
      ASSERT_EQ(ra, rb) << what;
      std::vector<std::uint32_t> at;
      for (std::size_t i = 0; i < e - b; ++i)
        if (rng() % 5 == 0) at.push_back(static_cast<std::uint32_t>(i));
      EXPECT_EQ(a.scores_at(q, at), p.scores_at(q, at)) << what;
      if (!at.empty()) {
        EXPECT_EQ(a.score_of(q, at.back()), rb[at.back()]) << what;
      }
    }
  }
}

}  // namespace
}  // namespace lcrwmd
