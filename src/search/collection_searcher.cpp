// CollectionSearcher (lcrwmd/segments.h): each segment searched by its own searcher, in order, the
// k-th best so far handed to the next segment as each query's ceiling; a method with a way of its
// own over the segments (MethodImpl::segments: bm25's one pass over every segment's postings,
// the hybrid's rows standardised over the whole collection) takes it. No method is named here.
#include <algorithm>
#include <limits>
#include <optional>

#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/topk.h"
#include "methods/method_impl.h"
#include "search/parts_merge.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

CollectionSearcher::CollectionSearcher(const SegmentSet& segments, const SearcherOptions& options,
                                       const CollectionSearcher* earlier)
    : segments_(segments) {
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const Index& segment = segments.segment(s);
    std::shared_ptr<const Searcher> kept;
    if (earlier != nullptr)
      for (const std::shared_ptr<const Searcher>& e : earlier->searchers_)
        if (&e->index() == &segment) kept = e;
    searchers_.push_back(kept ? std::move(kept) : make_searcher(segment, options));
  }
}

CollectionSearcher::~CollectionSearcher() = default;

SearchResults CollectionSearcher::top_k(const QuerySet& queries, std::size_t k,
                                        const SearchOptions& options, SearchStats* stats) const {
  const std::size_t n_segments = segments_.size(), nq = queries.size();
  if (!options.skip.empty())
    throw OptionError("skip",
                      "a collection leaves out its own deleted documents; it takes no "
                      "others");
  if (n_segments == 1 && !segments_.has_deletions())
    return segments_.reads_portable_queries()
               ? searchers_.front()->search(segments_.for_segment(queries, 0), k, options, stats)
               : searchers_.front()->search(queries, k, options, stats);
  const SegmentsWay& way = implementation(options.method).segments;
  if (way.top_k) return way.top_k(segments_, queries, k, options, stats);
  if (way.walk && options.prune) {
    const SegmentWalks walks_of = [&](std::size_t s, const QuerySet& q, std::size_t begin,
                                      std::size_t end, const SearchOptions& o) {
      const auto* cpu = dynamic_cast<const CpuSearcher*>(searchers_[s].get());
      return cpu ? cpu->walking_batch(q, begin, end, o) : nullptr;
    };
    if (std::optional<SearchResults> r = way.walk(segments_, queries, k, options, walks_of, stats))
      return std::move(*r);
  }
  if (way.evidence)
    return top_k_of_rows(nq, n_docs(), k, [&](const RowSink& sink) {
      all_distances(queries, options, sink, stats);
    });
  // The k best of the segments searched so far; its k-th is the next segment's ceiling, since the
  // next segment's documents come later and lose ties.
  ShardMerge best(nq, std::min(k, n_docs()));
  std::vector<float> ceilings(nq, std::numeric_limits<float>::infinity());
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats total;
  for (std::size_t s = 0; s < n_segments; ++s) {
    o.ceilings = ceilings;
    o.skip = segments_.deleted(s);
    SearchStats st;
    best.add(searchers_[s]->search(segments_.for_segment(queries, s), k, o, &st),
             [&](std::int64_t i) {
               return static_cast<std::int64_t>(
                   segments_.collection_doc(s, static_cast<std::size_t>(i)));
             });
    accumulate(total, st);
    for (std::size_t q = 0; q < nq; ++q) ceilings[q] = best.kth(q);
    if (options.progress) options.progress(nq * (s + 1) / n_segments, nq);
  }
  SearchResults out = best.take();
  if (stats) *stats = total;
  return out;
}

void CollectionSearcher::live_rows(const QuerySet& part, const SearchOptions& o, float* rows,
                                   SearchStats& total) const {
  const std::size_t n = n_docs();
  SearchOptions segment_options = o;
  segment_options.progress = nullptr;
  for (std::size_t s = 0; s < segments_.size(); ++s) {
    const std::size_t first_doc = segments_.first_doc(s), ns = segments_.segment(s).n_docs();
    segment_options.skip = segments_.deleted(s);
    SearchStats st;
    searchers_[s]->pairwise(
        segments_.for_segment(part, s), segment_options,
        [&](std::size_t first, std::size_t count, const float* d) {
          for (std::size_t r = 0; r < count; ++r) {
            float* row = rows + (first + r) * n + first_doc;
            const float* from = d + r * ns;
            // The live columns, in order.
            for_each_kept(ns, segments_.deleted(s), [&](std::size_t i) { *row++ = from[i]; });
          }
        },
        &st);
    accumulate(total, st);
  }
}

void CollectionSearcher::all_distances(const QuerySet& queries, const SearchOptions& options,
                                       const RowSink& sink, SearchStats* stats) const {
  const std::size_t nq = queries.size(), n = n_docs();
  if (segments_.size() == 1 && !segments_.has_deletions())
    return segments_.reads_portable_queries()
               ? searchers_.front()->pairwise(segments_.for_segment(queries, 0), options, sink,
                                              stats)
               : searchers_.front()->pairwise(queries, options, sink, stats);
  const std::size_t chunk = pairwise_rows_at_once(n, nq);
  SearchStats total;
  std::vector<float> rows;
  for (std::size_t begin = 0; begin < nq; begin += chunk) {
    const std::size_t end = std::min(nq, begin + chunk);
    const QuerySet part = subset(queries, begin, end);
    if (const SegmentsWay& way = implementation(options.method).segments; way.evidence) {
      Evidence e = way.evidence(
          segments_, [&](const SearchOptions& o, float* into) { live_rows(part, o, into, total); },
          part, options);
      way.answer(e, n, options);
      sink(begin, end - begin, e.distances.data());
    } else {
      rows.assign((end - begin) * n, 0.0f);
      live_rows(part, options, rows.data(), total);
      sink(begin, end - begin, rows.data());
    }
    if (options.progress) options.progress(end, nq);
  }
  if (stats) *stats = total;
}

}  // namespace lcrwmd
