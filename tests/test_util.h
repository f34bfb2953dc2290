#pragma once
// Helpers shared by the tests: temporary files, random corpora, the shared data directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/text.h"
#include "lcrwmd/topk.h"

namespace lcrwmd::test {

// A directory of this test process's own, removed when the process exits.
inline std::filesystem::path temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string tmpl = (std::filesystem::temp_directory_path() / "lcrwmd-test-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
      path = tmpl;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// A whole file's bytes.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A path in temp_dir().
inline std::string tmp(const std::string& name) { return (temp_dir() / name).string(); }

inline std::string write_file(const std::string& name, const std::string& content) {
  const auto path = temp_dir() / name;
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

inline std::string shared_data() {
  const char* env = std::getenv("LCRWMD_SHARED_DATA");
  return env ? env : std::string(LCRWMD_SOURCE_DIR) + "/../shared/data";
}

#define REQUIRE_SHARED_DATA()                                                      \
  if (!std::filesystem::exists(::lcrwmd::test::shared_data() + "/stop_words.txt")) \
  GTEST_SKIP() << "shared data not found at " << ::lcrwmd::test::shared_data()

// "w17": appended, since GCC 12 warns falsely (-Wrestrict) on "w" + std::to_string(17) here.
inline std::string numbered(char prefix, std::size_t n) {
  std::string s(1, prefix);
  s += std::to_string(n);
  return s;
}

// Appends a query of `words`, each weighted 1/n, with no label.
inline void add_query(QuerySet& qs, std::string id, std::span<const std::uint32_t> words) {
  for (const std::uint32_t u : words) {
    qs.words.push_back(u);
    qs.weights.push_back(1.0f / static_cast<float>(words.size()));
  }
  qs.indptr.push_back(qs.words.size());
  qs.ids.push_back(std::move(id));
  qs.labels.emplace_back();
}

// A random corpus: Gaussian vectors, documents of 1..max_h distinct words with random counts.
// Some vectors are duplicated so that distinct words can be at distance exactly 0.
inline IndexData random_index(std::size_t n_docs, std::size_t vocab, std::size_t dim,
                              std::size_t max_h, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  IndexData d;
  d.dim = dim;
  for (std::size_t u = 0; u < vocab; ++u) {
    d.vocab.push_back(numbered('w', u));
    for (std::size_t k = 0; k < dim; ++k)
      d.vectors.push_back(u % 7 == 6 ? d.vectors[(u - 1) * dim + k] : normal(rng));
  }
  d.doc_freq.assign(vocab, 0);
  std::uniform_int_distribution<std::size_t> hdist(1, max_h);
  for (std::size_t i = 0; i < n_docs; ++i) {
    const std::size_t h = std::min(hdist(rng), vocab);
    std::vector<std::uint32_t> ws(vocab);
    for (std::size_t u = 0; u < vocab; ++u) ws[u] = static_cast<std::uint32_t>(u);
    std::shuffle(ws.begin(), ws.end(), rng);
    ws.resize(h);
    std::sort(ws.begin(), ws.end());
    std::vector<double> c(h);
    double total = 0;
    for (auto& x : c) total += x = 1.0 + static_cast<double>(rng() % 5);
    for (std::size_t p = 0; p < h; ++p) {
      d.indices.push_back(ws[p]);
      d.values.push_back(static_cast<float>(c[p] / total));
      ++d.doc_freq[ws[p]];
    }
    d.indptr.push_back(d.indices.size());
    d.ids.push_back(numbered('d', i));
    d.labels.push_back(numbered('c', i % 3));
  }
  return d;
}

// A corpus from the shared data (callers REQUIRE_SHARED_DATA first): its first n_train training
// documents (0: all) as the index, its first n_queries test documents as queries, with Kusner's
// stop words and the shared CBOW vectors (also for query words the index lacks).
struct RealData {
  Index index;
  QuerySet queries;
};
inline RealData real_corpus(const std::string& name, std::size_t n_train, std::size_t n_queries) {
  const std::string dir = shared_data();
  const Embeddings emb = Embeddings::load(dir + "/embeddings/cbow300.bin");
  const StopWords stop = StopWords::load(dir + "/stop_words.txt");
  const auto file = [&](const std::string& part) {
    const std::string plain = dir + "/corpora/" + name + "/" + part + ".tsv";
    return std::filesystem::exists(plain) ? plain : plain + ".gz";
  };
  std::vector<RawDocument> train = read_tsv(file("train"));
  if (n_train) train.resize(n_train);
  std::vector<RawDocument> queries = read_tsv(file("test"));
  queries.resize(n_queries);
  BuildOptions bo;
  bo.stopwords = &stop;
  Index ix = Index::from_data(build_index_data(emb, train, bo, nullptr));
  QuerySet qs = make_query_set(ix, queries, {&emb});
  return {std::move(ix), std::move(qs)};
}
inline RealData bbcsport(std::size_t n_train, std::size_t n_queries) {
  return real_corpus("bbcsport", n_train, n_queries);
}

// The full distance matrix of a method, queries x documents.
inline std::vector<float> matrix(const Searcher& s, const QuerySet& qs, const SearchOptions& o) {
  const std::size_t n = s.n_docs();
  std::vector<float> m(qs.size() * n, -1.0f);
  s.pairwise(qs, o, [&](std::size_t first, std::size_t rows, const float* d) {
    std::copy(d, d + rows * n, m.begin() + static_cast<std::ptrdiff_t>(first * n));
  });
  return m;
}
inline std::vector<float> matrix(const Index& ix, const QuerySet& qs, const SearchOptions& o) {
  return matrix(CpuSearcher(ix), qs, o);
}

// Search must return exactly the k best of the full matrix, ties by document index.
inline void expect_topk_matches_sort(const Searcher& searcher, const QuerySet& qs,
                                     SearchOptions o) {
  const Index& ix = searcher.index();
  const auto full = test::matrix(searcher, qs, o);
  for (std::size_t k : {1u, 4u, 10u, 1000u}) {
    for (bool prune : {true, false}) {
      o.prune = prune;
      SearchStats st;
      const SearchResults r = searcher.search(qs, k, o, &st);
      ASSERT_EQ(r.k, std::min(k, ix.n_docs()));
      for (std::size_t q = 0; q < qs.size(); ++q) {
        std::vector<Neighbor> all;
        for (std::size_t i = 0; i < ix.n_docs(); ++i)
          all.push_back({full[q * ix.n_docs() + i], static_cast<std::int64_t>(i)});
        std::sort(all.begin(), all.end());
        for (std::size_t j = 0; j < r.k; ++j) {
          ASSERT_EQ(r.indices[q * r.k + j], all[j].index)
              << to_string(o.method) << " k=" << k << " prune=" << prune << " q=" << q;
          ASSERT_EQ(r.distances[q * r.k + j], all[j].distance);
        }
      }
      // One-sided LC-RWMD refines a single query's first ~64 + 2k documents at once (without a
      // tighter bound between): a small index it may refine whole.
      const bool bounded =
          o.method == Method("wmd") || (o.method == Method("lc-rwmd") &&
                                        (o.direction == Direction::symmetric || ix.n_docs() > 200));
      if (bounded && prune && k < 10) {
        EXPECT_LT(st.refined, qs.size() * ix.n_docs()) << "pruning skipped nothing";
      }
    }
  }
}

// Appends `copies` copies of document `doc` (ids prefix0, prefix1, ...): documents that tie.
inline void append_copies(IndexData& d, std::size_t doc, std::size_t copies,
                          const std::string& prefix) {
  for (std::size_t copy = 0; copy < copies; ++copy) {
    for (std::uint64_t p = d.indptr[doc]; p < d.indptr[doc + 1]; ++p) {
      d.indices.push_back(d.indices[p]);
      d.values.push_back(d.values[p]);
    }
    d.indptr.push_back(d.indices.size());
    d.ids.push_back(prefix + std::to_string(copy));
    d.labels.emplace_back();
  }
}

// A pair's distance in `direction` from its two one-sided values (d1 = document -> query).
inline double directed(Direction direction, double d1, double d2) {
  return direction == Direction::symmetric           ? std::max(d1, d2)
         : direction == Direction::document_to_query ? d1
                                                     : d2;
}

// Random queries: some copies of resident documents, some fresh, some with words the index
// lacks (extra vectors), one of a single word.
inline QuerySet mixed_queries(const Index& ix, std::size_t n_fresh, unsigned seed) {
  std::vector<std::size_t> self = {0, 3, ix.n_docs() - 1};
  QuerySet qs = query_set_from_index(ix, self);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  const std::size_t v = ix.vocab_size(), m = ix.dim();
  for (std::size_t e = 0; e < 5; ++e) {
    qs.extra_words.push_back(std::string("extra").append(std::to_string(e)));
    for (std::size_t k = 0; k < m; ++k)
      // extra0 duplicates an index vector exactly: its distances to that word must be 0.
      qs.extra_vectors.push_back(e == 0 ? ix.vector(5)[k] : normal(rng));
  }
  for (std::size_t f = 0; f < n_fresh; ++f) {
    const std::size_t h = f == 0 ? 1 : 1 + rng() % 12;
    std::vector<std::uint32_t> ws;
    while (ws.size() < h) {
      const auto u = static_cast<std::uint32_t>(rng() % (v + 5));
      if (std::find(ws.begin(), ws.end(), u) == ws.end()) ws.push_back(u);
    }
    std::sort(ws.begin(), ws.end());
    float total = 0;
    std::vector<float> w(h);
    for (auto& x : w) total += x = 1.0f + static_cast<float>(rng() % 4);
    for (std::size_t p = 0; p < h; ++p) {
      qs.words.push_back(ws[p]);
      qs.weights.push_back(w[p] / total);
    }
    qs.indptr.push_back(qs.words.size());
    qs.ids.push_back(numbered('q', f));
    qs.labels.emplace_back();
  }
  return qs;
}

}  // namespace lcrwmd::test
