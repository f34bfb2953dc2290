#include "bench_directions.h"

#include <algorithm>
#include <string>

namespace lcrwmd::bench {
namespace {

constexpr Direction kSides[] = {Direction::document_to_query, Direction::query_to_document,
                                Direction::symmetric};

SearchOptions lc_in(Direction d, std::size_t batch) {
  SearchOptions o;
  o.method = Method::lc_rwmd;
  o.direction = d;
  o.batch = batch;
  return o;
}

}  // namespace

QuerySet short_queries(const QuerySet& qs, std::size_t words) {
  QuerySet out;
  out.extra_words = qs.extra_words;
  out.extra_vectors = qs.extra_vectors;
  for (std::size_t q = 0; q < qs.size(); ++q) {
    const std::size_t n = qs.length(q), h = std::min(words, n);
    for (std::size_t p = 0; p < h; ++p) {
      out.words.push_back(qs.words[qs.indptr[q] + p * n / h]);
      out.weights.push_back(1.0f / static_cast<float>(h));
    }
    out.indptr.push_back(out.words.size());
    out.ids.push_back(qs.ids[q]);
    out.labels.push_back(qs.labels[q]);
  }
  return out;
}

void direction_benchmarks(const Searcher& searcher, const QuerySet& qs, std::size_t reps,
                          const std::vector<std::size_t>& batches, Report& rep) {
  // One query at a time, the three directions in turn on each query.
  std::vector<double> t[3], ratio[3];
  std::size_t refined = 0;
  for (std::size_t r = 0; r < reps + 1; ++r) {
    const QuerySet q = slice(qs, r % qs.size(), 1);
    double took[3];
    for (std::size_t d = 0; d < 3; ++d) {
      SearchStats st;
      took[d] = seconds_of([&] { searcher.search(q, 10, lc_in(kSides[d], 1), &st); });
      if (r > 0 && kSides[d] == Direction::query_to_document) refined += st.refined;
    }
    if (r == 0) continue;  // warm-up
    for (std::size_t d = 0; d < 3; ++d) {
      t[d].push_back(took[d]);
      ratio[d].push_back(took[d] / took[0]);
    }
  }
  for (std::size_t d = 0; d < 3; ++d) {
    const std::string name = to_string(kSides[d]);
    rep.add("single query: " + name + " LC-RWMD top-10 (ms)", 1e3 * median(t[d]), "ms");
    rep.figure("single_" + name + "_ms", 1e3 * median(t[d]));
    if (d > 0) {
      rep.add("single query: " + name + " / document-to-query (median of paired ratios)",
              median(ratio[d]), "x");
      rep.figure("single_" + name + "_vs_document_to_query", median(ratio[d]));
    }
  }
  rep.add("query-to-document: documents whose D2 was computed per query (mean)",
          static_cast<double>(refined) / static_cast<double>(reps), "docs");
  for (const std::size_t b : batches) {
    const QuerySet q = slice(qs, 0, b);
    for (const Direction d : kSides) {
      std::vector<double> runs;
      for (int r = 0; r < 2; ++r)
        runs.push_back(seconds_of([&] { searcher.search(q, 10, lc_in(d, b)); }));
      const double per_query = std::min(runs[0], runs[1]) / static_cast<double>(q.size());
      const std::string name = "batch of " + std::to_string(q.size()) + ", " + to_string(d);
      rep.add(name + ": per query (ms)", 1e3 * per_query, "ms");
      rep.figure("batch" + std::to_string(q.size()) + "_" + to_string(d) + "_qps", 1 / per_query);
    }
  }
}

}  // namespace lcrwmd::bench
