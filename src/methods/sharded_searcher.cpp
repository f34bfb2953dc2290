// ShardedSearcher (lcrwmd/sharded.h): each shard searched by its own searcher, in order, the
// k-th best so far handed to the next shard as each query's ceiling; bm25 over all the shards'
// postings in one pass; the hybrid from every shard's distances and scores, standardised over
// the whole collection.
#include <omp.h>

#include <algorithm>
#include <limits>

#include "lcrwmd/error.h"
#include "lcrwmd/sharded.h"
#include "lcrwmd/topk.h"
#include "methods/bm25.h"
#include "methods/hybrid.h"
#include "methods/shard_merge.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

namespace {

// bm25 over every shard's postings in one pass: a row of scores over all their documents (the
// deleted ones then left out) and one top-k, as one index of the live documents ranks them
// (the same bytes: each document's sum reads its own terms in the same order). Shard after
// shard, each would look every query term up again and run its own passes and top-k (2.8x the
// time of one index over four segments of 20news).
SearchResults bm25_top_k(const ShardSet& shards, const QuerySet& queries, std::size_t k,
                         const SearchOptions& o, SearchStats* stats) {
  const std::size_t nq = queries.size();
  SearchResults r = empty_results(nq, std::min(k, shards.n_docs()));
  const Bm25Parameters bm25 = bm25_parameters(o);
  const Bm25Scorer scorer(shards, queries, 0, nq, bm25.k1, bm25.b);
  const std::size_t n = scorer.n_docs();
  std::vector<std::vector<float>> rows(static_cast<std::size_t>(omp_get_max_threads()));
  SearchStats st;
  constexpr std::size_t kChunk = 256;  // queries between progress reports
  for (std::size_t first = 0; first < nq; first += kChunk) {
    const std::size_t count = std::min(kChunk, nq - first);
    scorer.score_each(first, count, [&](std::size_t j, const std::vector<double>& score) {
      std::vector<float>& row = rows[static_cast<std::size_t>(omp_get_thread_num())];
      row.resize(n);
      for (std::size_t i = 0; i < n; ++i) row[i] = bm25_distance(score[i]);
      for (std::size_t s = 0; s < shards.size(); ++s)
        for (const std::uint32_t d : shards.deleted(s))
          row[scorer.first(s) + d] = std::numeric_limits<float>::infinity();
      const std::vector<Neighbor> top = select_topk(row, r.k);
      const std::size_t q = first + j;
      for (std::size_t t = 0; t < top.size(); ++t) {
        if (top[t].distance == std::numeric_limits<float>::infinity()) break;  // deleted
        const auto [s, i] = scorer.locate(static_cast<std::size_t>(top[t].index));
        r.distances[q * r.k + t] = top[t].distance;
        r.indices[q * r.k + t] = static_cast<std::int64_t>(shards.collection_doc(s, i));
      }
    });
    ++st.batches;
    st.distances += count * shards.n_docs();
    if (o.progress) o.progress(first + count, nq);
  }
  if (stats) *stats = st;
  return r;
}

}  // namespace
ShardedSearcher::ShardedSearcher(const ShardSet& shards, const SearcherOptions& options)
    : shards_(shards) {
  for (std::size_t s = 0; s < shards.size(); ++s)
    searchers_.push_back(make_searcher(shards.shard(s), options));
}

ShardedSearcher::~ShardedSearcher() = default;

SearchResults ShardedSearcher::top_k(const QuerySet& queries, std::size_t k,
                                     const SearchOptions& options, SearchStats* stats) const {
  const std::size_t n_shards = shards_.size(), nq = queries.size();
  if (!options.skip.empty())
    throw OptionError("skip",
                      "a collection leaves out its own deleted documents; it takes no "
                      "others");
  if (n_shards == 1 && !shards_.has_deletions())
    return searchers_.front()->search(queries, k, options, stats);
  if (options.method == Method("bm25")) return bm25_top_k(shards_, queries, k, options, stats);
  if (options.method->needs == Needs::whole_rows) return whole_top_k(queries, k, options, stats);
  // The k best of the shards searched so far; its k-th is the next shard's ceiling, since the
  // next shard's documents come later and lose ties.
  ShardMerge best(nq, std::min(k, n_docs()));
  std::vector<float> ceilings(nq, std::numeric_limits<float>::infinity());
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats total;
  for (std::size_t s = 0; s < n_shards; ++s) {
    o.ceilings = ceilings;
    o.skip = shards_.deleted(s);
    SearchStats st;
    best.add(searchers_[s]->search(shards_.for_shard(queries, s), k, o, &st), [&](std::int64_t i) {
      return static_cast<std::int64_t>(shards_.collection_doc(s, static_cast<std::size_t>(i)));
    });
    accumulate(total, st);
    for (std::size_t q = 0; q < nq; ++q) ceilings[q] = best.kth(q);
    if (options.progress) options.progress(nq * (s + 1) / n_shards, nq);
  }
  SearchResults out = best.take();
  if (stats) *stats = total;
  return out;
}

void ShardedSearcher::live_rows(const QuerySet& part, const SearchOptions& o, float* rows,
                                SearchStats& total) const {
  const std::size_t n = n_docs();
  SearchOptions shard_options = o;
  shard_options.progress = nullptr;
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    const std::size_t first_doc = shards_.first_doc(s), ns = shards_.shard(s).n_docs();
    shard_options.skip = shards_.deleted(s);
    SearchStats st;
    searchers_[s]->pairwise(
        shards_.for_shard(part, s), shard_options,
        [&](std::size_t first, std::size_t count, const float* d) {
          for (std::size_t r = 0; r < count; ++r) {
            float* row = rows + (first + r) * n + first_doc;
            const float* from = d + r * ns;
            // The live columns, in order.
            for_each_kept(ns, shards_.deleted(s), [&](std::size_t i) { *row++ = from[i]; });
          }
        },
        &st);
    accumulate(total, st);
  }
}

void ShardedSearcher::hybrid_rows(const QuerySet& part, const SearchOptions& o, float* rows,
                                  SearchStats& total) const {
  SearchOptions distance = o;
  distance.method = Method("lc-rwmd");
  distance.parameters = {};
  distance.direction = Direction::query_to_document;
  live_rows(part, distance, rows, total);
  const Bm25Parameters bm25 = bm25_parameters(o);
  const Bm25Scorer scorer(shards_, part, 0, part.size(), bm25.k1, bm25.b);
  const std::size_t n = n_docs();
  scorer.score_each(0, part.size(), [&](std::size_t j, const std::vector<double>& score) {
    std::vector<double> live;  // the live documents' scores, in the collection's order
    live.reserve(n);
    for (std::size_t s = 0; s < shards_.size(); ++s)
      for_each_kept(shards_.shard(s).n_docs(), shards_.deleted(s),
                    [&](std::size_t i) { live.push_back(score[scorer.first(s) + i]); });
    fuse_hybrid(rows + j * n, live.data(), n, {}, hybrid_weight(o));
  });
}

SearchResults ShardedSearcher::whole_top_k(const QuerySet& queries, std::size_t k,
                                           const SearchOptions& options, SearchStats* stats) const {
  const std::size_t n = n_docs();
  SearchResults r = empty_results(queries.size(), std::min(k, n));
  all_distances(
      queries, options,
      [&](std::size_t first, std::size_t count, const float* d) {
#pragma omp parallel for schedule(dynamic)
        for (std::size_t j = 0; j < count; ++j) {
          const std::vector<Neighbor> top = select_topk({d + j * n, n}, r.k);
          for (std::size_t t = 0; t < top.size(); ++t) {
            r.distances[(first + j) * r.k + t] = top[t].distance;
            r.indices[(first + j) * r.k + t] = static_cast<std::int64_t>(top[t].index);
          }
        }
      },
      stats);
  return r;
}

void ShardedSearcher::all_distances(const QuerySet& queries, const SearchOptions& options,
                                    const RowSink& sink, SearchStats* stats) const {
  const std::size_t nq = queries.size(), n = n_docs();
  if (shards_.size() == 1 && !shards_.has_deletions())
    return searchers_.front()->pairwise(queries, options, sink, stats);
  const std::size_t chunk = pairwise_rows_at_once(n, nq);
  SearchStats total;
  std::vector<float> rows;
  for (std::size_t begin = 0; begin < nq; begin += chunk) {
    const std::size_t end = std::min(nq, begin + chunk);
    const QuerySet part = subset(queries, begin, end);
    rows.assign((end - begin) * n, 0.0f);
    if (options.method->needs == Needs::whole_rows)
      hybrid_rows(part, options, rows.data(), total);
    else
      live_rows(part, options, rows.data(), total);
    sink(begin, end - begin, rows.data());
    if (options.progress) options.progress(end, nq);
  }
  if (stats) *stats = total;
}

}  // namespace lcrwmd
