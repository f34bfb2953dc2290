#include "bench_directions.h"

#include <algorithm>
#include <limits>
#include <string>

#include "lcrwmd/atomic_file.h"
#include "lcrwmd/topk.h"
#include "methods/bm25/bm25.h"

namespace lcrwmd::bench {
namespace {

// What is timed: LC-RWMD in each direction (one-sided first, the others' yardstick), then bm25
// and hybrid (query-to-document).
struct Run {
  const char* method;
  Direction direction;
};
constexpr Run kRuns[] = {{"lc-rwmd", Direction::document_to_query},
                         {"lc-rwmd", Direction::query_to_document},
                         {"lc-rwmd", Direction::symmetric},
                         {"bm25", Direction::query_to_document},
                         {"hybrid", Direction::query_to_document}};
constexpr std::size_t kN = std::size(kRuns);
constexpr std::size_t kBm25 = 3;  // kRuns' bm25

SearchOptions options(const Run& run, std::size_t batch) {
  SearchOptions o;
  o.method = Method(run.method);
  o.direction = run.direction;
  o.batch = batch;
  return o;
}

std::string name(const Run& run) {
  return std::string_view(run.method) == "lc-rwmd"
             ? std::string(to_string(run.direction)) + " LC-RWMD"
             : std::string(run.method);
}

std::string key(const Run& run) {
  return std::string_view(run.method) == "lc-rwmd" ? std::string(to_string(run.direction))
                                                   : std::string(run.method);
}

// bm25 as it ranked before its walk over the postings' blocks: every posting of the query's
// terms scored into a row of every document, the k best selected from it.
std::vector<Neighbor> every_posting_bm25(const Index& index, const QuerySet& q, std::size_t k) {
  const Bm25Scorer scorer(index, q, 0, 1, kBm25K1.default_value, kBm25B.default_value);
  std::vector<double> score(scorer.n_docs());
  scorer.score(0, score.data(), 0, score.size());
  std::vector<float> row(score.size());
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = bm25_distance(score[i]);
  return select_topk(row, k);
}

}  // namespace

QuerySet short_queries(const Index& index, const QuerySet& qs, std::size_t words, bool idf) {
  if (words == 0) return qs;  // as typed
  QuerySet out;
  out.extra_words = qs.extra_words;
  out.extra_vectors = qs.extra_vectors;
  QueryTerms& t = out.terms;
  t.mean_length = index.idf_length() / static_cast<double>(index.idf_docs());
  for (std::size_t q = 0; q < qs.size(); ++q) {
    const std::size_t n = qs.length(q), h = std::min(words, n);
    std::vector<std::string> names;
    double kept = 0;  // the kept words' weights in qs
    for (std::size_t p = 0; p < h; ++p) kept += qs.weights[qs.indptr[q] + p * n / h];
    for (std::size_t p = 0; p < h; ++p) {
      const std::uint64_t at = qs.indptr[q] + p * n / h;
      const std::uint32_t u = qs.words[at];
      out.words.push_back(u);
      out.weights.push_back(idf ? static_cast<float>(qs.weights[at] / kept)
                                : 1.0f / static_cast<float>(h));
      names.emplace_back(u < index.vocab_size() ? index.word(u)
                                                : qs.extra_words[u - index.vocab_size()]);
    }
    std::sort(names.begin(), names.end());
    for (std::string& name : names) {
      const auto id = index.find_term(name);
      t.idf.push_back(
          static_cast<float>(bm25_idf(index.idf_docs(), id ? index.term_doc_freq(*id) : 0)));
      t.terms.push_back(std::move(name));
      t.counts.push_back(1);
    }
    t.indptr.push_back(t.terms.size());
    out.indptr.push_back(out.words.size());
    out.ids.push_back(qs.ids[q]);
    out.labels.push_back(qs.labels[q]);
  }
  return out;
}

void write_query_text(const QuerySet& qs, const std::string& path) {
  AtomicFile out(path);
  const QueryTerms& t = qs.terms;
  for (std::size_t q = 0; q < qs.size(); ++q) {
    std::string line = qs.ids[q] + "\t\t";
    for (std::size_t i = t.indptr[q]; i < t.indptr[q + 1]; ++i)
      (line += i == t.indptr[q] ? "" : " ") += t.terms[i];
    out.write(line + "\n");
  }
  out.commit();
}

void direction_benchmarks(const Searcher& searcher, const QuerySet& qs, std::size_t reps,
                          std::size_t warm_up, const std::vector<std::size_t>& batches,
                          Report& rep) {
  // One query at a time, every run in turn on each query.
  std::vector<double> t[kN], ratio[kN], every, walk_vs_every;
  std::size_t refined = 0;
  for (std::size_t r = 0; r < warm_up + reps; ++r) {
    // The timed queries start again from the first: the warm-up ran the same ones.
    const QuerySet q = slice(qs, (r < warm_up ? r : r - warm_up) % qs.size(), 1);
    double took[kN];
    for (std::size_t d = 0; d < kN; ++d) {
      SearchStats st;
      took[d] = seconds_of([&] { searcher.search(q, 10, options(kRuns[d], 1), &st); });
      if (r >= warm_up && d == 1) refined += st.refined;
    }
    const double every_took =
        seconds_of([&] { (void)every_posting_bm25(searcher.index(), q, 10); });
    if (r < warm_up) continue;
    every.push_back(every_took);
    walk_vs_every.push_back(took[kBm25] / every_took);
    for (std::size_t d = 0; d < kN; ++d) {
      t[d].push_back(took[d]);
      ratio[d].push_back(took[d] / took[0]);
    }
  }
  for (std::size_t d = 0; d < kN; ++d) {
    rep.add("single query: " + name(kRuns[d]) + " top-10 (ms)", 1e3 * median(t[d]), "ms");
    rep.figure("single_" + key(kRuns[d]) + "_ms", 1e3 * median(t[d]));
    if (d > 0) {
      rep.add("single query: " + name(kRuns[d]) +
                  " / document-to-query LC-RWMD (median of paired ratios)",
              median(ratio[d]), "x");
      rep.figure("single_" + key(kRuns[d]) + "_vs_document_to_query", median(ratio[d]));
    }
  }
  rep.add("single query: bm25 scoring every posting, as before its walk (ms)", 1e3 * median(every),
          "ms");
  rep.figure("single_bm25_every_posting_ms", 1e3 * median(every));
  rep.add("single query: bm25 / bm25 scoring every posting (median of paired ratios)",
          median(walk_vs_every), "x");
  rep.figure("single_bm25_vs_every_posting", median(walk_vs_every));
  rep.add("query-to-document: documents whose D2 was computed per query (mean)",
          static_cast<double>(refined) / static_cast<double>(reps), "docs");
  // Each run again in a pass of its own over the same queries, as a peer engine is timed (one
  // method, query after query): above, every run follows the others' on the same query, which
  // leave the caches holding their data.
  for (std::size_t d = 0; d < kN; ++d) {
    std::vector<double> alone;
    for (std::size_t r = 0; r < reps; ++r) {
      const QuerySet q = slice(qs, r % qs.size(), 1);
      alone.push_back(seconds_of([&] { searcher.search(q, 10, options(kRuns[d], 1)); }));
    }
    rep.add("single query, a pass of its own: " + name(kRuns[d]) + " top-10 (ms)",
            1e3 * median(alone), "ms");
    rep.figure("alone_" + key(kRuns[d]) + "_ms", 1e3 * median(alone));
  }
  for (const std::size_t b : batches) {
    const QuerySet q = slice(qs, 0, b);
    for (const Run& run : kRuns) {
      std::vector<double> runs;
      for (int r = 0; r < 2; ++r)
        runs.push_back(seconds_of([&] { searcher.search(q, 10, options(run, b)); }));
      const double per_query = std::min(runs[0], runs[1]) / static_cast<double>(q.size());
      const std::string label = "batch of " + std::to_string(q.size()) + ", " + name(run);
      rep.add(label + ": per query (ms)", 1e3 * per_query, "ms");
      rep.figure("batch" + std::to_string(q.size()) + "_" + key(run) + "_qps", 1 / per_query);
    }
  }
}

}  // namespace lcrwmd::bench
