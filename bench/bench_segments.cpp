#include "bench_segments.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "lcrwmd/error.h"
#include "lcrwmd/segments.h"

namespace lcrwmd::bench {
namespace {

struct Range {
  std::size_t begin, end;
};

// The words of documents [r.begin, r.end) not yet marked in `seen`, marked now.
std::size_t mark_words(const IndexData& d, Range r, std::vector<char>& seen) {
  std::size_t n = 0;
  for (std::uint64_t p = d.indptr[r.begin]; p < d.indptr[r.end]; ++p)
    n += seen[d.indices[p]] ? 0 : (seen[d.indices[p]] = 1);
  return n;
}

// Distinct words of documents [r.begin, r.end).
std::size_t words_of(const IndexData& d, Range r, std::vector<char>& seen) {
  seen.assign(d.vocab.size(), 0);
  return mark_words(d, r, seen);
}

// The segments a collection of the documents but the last `adds` is left with after adding
// those one at a time, under the merge policy of docs/collections.md (as the library applies
// it; its constants repeated here): whenever the ten newest segments share a tier (log10 of
// their documents) they become one; then, while the vocabularies add up to more than 1.1
// times the distinct words, the newest two become one.
std::vector<Range> layout(const IndexData& d, std::size_t adds) {
  constexpr std::size_t kMergeFactor = 10;
  constexpr double kVocabularySlack = 1.1;
  const auto tier = [](std::size_t docs) {
    std::size_t t = 0;
    for (; docs >= kMergeFactor; docs /= kMergeFactor) ++t;
    return t;
  };
  const std::size_t n = d.ids.size();
  if (adds >= n) throw Error("segments: --adds must be below the documents");
  std::vector<char> seen, all(d.vocab.size(), 0);
  std::vector<Range> out{{0, n - adds}};
  std::vector<std::size_t> words{words_of(d, out[0], seen)};
  std::size_t distinct = mark_words(d, out[0], all);
  const auto merge = [&](std::size_t first) {  // segments [first, end) into one
    out[first].end = out.back().end;
    out.resize(first + 1);
    words.resize(first + 1);
    words[first] = words_of(d, out[first], seen);
  };
  for (std::size_t i = n - adds; i < n; ++i) {
    out.push_back({i, i + 1});
    words.push_back(words_of(d, out.back(), seen));
    distinct += mark_words(d, out.back(), all);
    for (;;) {
      const std::size_t s = out.size();
      if (s < kMergeFactor) break;
      const std::size_t t = tier(out[s - 1].end - out[s - 1].begin);
      bool same = true;
      for (std::size_t j = s - kMergeFactor; j < s; ++j)
        same = same && tier(out[j].end - out[j].begin) == t;
      if (!same) break;
      merge(s - kMergeFactor);
    }
    while (out.size() > 1 &&
           static_cast<double>(std::accumulate(words.begin(), words.end(), std::size_t{0})) >
               kVocabularySlack * static_cast<double>(distinct))
      merge(out.size() - 2);
  }
  return out;
}

struct Case {
  const char* name;
  const char* method;
  Direction direction;
};
constexpr Case kCases[] = {{"lc-rwmd symmetric", "lc-rwmd", Direction::symmetric},
                           {"bm25", "bm25", Direction::query_to_document}};

}  // namespace

void segment_benchmarks(const Index& whole, const QuerySet& qs, const SearcherOptions& so,
                        const SegmentsRun& run, Report& rep) {
  const IndexData data = whole.data();
  const std::vector<Range> ranges = layout(data, run.adds);
  std::vector<Index> segments;
  std::size_t vocab_sum = 0;
  std::printf("segments (documents, words):");
  for (const Range& r : ranges) {
    std::vector<std::size_t> docs(r.end - r.begin);
    std::iota(docs.begin(), docs.end(), r.begin);
    segments.push_back(Index::from_data(select_documents(data, docs)));
    vocab_sum += segments.back().vocab_size();
    std::printf(" (%zu, %zu)", segments.back().n_docs(), segments.back().vocab_size());
  }
  std::printf("\n");
  std::vector<const Index*> parts;
  for (const Index& s : segments) parts.push_back(&s);
  const SegmentSet set(parts);
  rep.add("segments", static_cast<double>(segments.size()), "");
  rep.add("their vocabularies over the distinct words",
          static_cast<double>(vocab_sum) / static_cast<double>(whole.vocab_size()), "x");
  const auto one = make_searcher(whole, so);
  const CollectionSearcher grown(set, so);
  const QuerySet qg = translate_queries(whole, qs, segments.front());
  for (const Case& c : kCases) {
    SearchOptions o;
    o.method = Method(c.method);
    o.direction = c.direction;
    std::size_t differ = 0;
    const auto time_both = [&](const QuerySet& a, const QuerySet& b, std::vector<double>& t1,
                               std::vector<double>& tg, bool keep) {
      SearchResults r1, rg;
      const double x = seconds_of([&] { r1 = one->search(a, 10, o); });
      const double y = seconds_of([&] { rg = grown.search(b, 10, o); });
      if (keep) t1.push_back(x), tg.push_back(y);
      differ += r1.indices != rg.indices;
    };
    // One at a time: each query on both in turn (the first round warms up).
    std::vector<double> t1, tg, ratio;
    for (std::size_t r = 0; r < run.reps + 1; ++r)
      for (std::size_t q = 0; q < std::min(run.single, qs.size()); ++q) {
        const std::size_t before = t1.size();
        time_both(slice(qs, q, 1), slice(qg, q, 1), t1, tg, r > 0);
        if (t1.size() > before) ratio.push_back(tg.back() / t1.back());
      }
    const std::string name = c.name;
    rep.add(name + ", one query: one index (ms)", 1e3 * median(t1), "ms");
    rep.add(name + ", one query: grown collection (ms)", 1e3 * median(tg), "ms");
    rep.add(name + ", one query: grown / one index (median ratio)", median(ratio), "x");
    rep.figure(name + " single ratio", median(ratio));
    if (run.batch) {
      const std::size_t b = std::min(run.batch, qs.size());
      std::vector<double> b1, bg;
      for (std::size_t r = 0; r < run.reps + 1; ++r)
        time_both(slice(qs, 0, b), slice(qg, 0, b), b1, bg, r > 0);
      const double m1 = *std::min_element(b1.begin(), b1.end()),
                   mg = *std::min_element(bg.begin(), bg.end());
      rep.add(name + ", batch of " + std::to_string(b) + ": one index (s)", m1, "s");
      rep.add(name + ", batch of " + std::to_string(b) + ": grown collection (s)", mg, "s");
      rep.add(name + ", batch: grown / one index (least of each)", mg / m1, "x");
      rep.figure(name + " batch ratio", mg / m1);
    }
    rep.add(name + ": searches whose neighbours differ", static_cast<double>(differ), "");
  }
}

}  // namespace lcrwmd::bench
