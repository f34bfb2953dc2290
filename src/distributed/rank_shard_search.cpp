// RankShards (lcrwmd/segments.h): search, with WMD's shared k-th best, a method answering from
// every document's evidence (rank 0 answers from every rank's), and pairwise. Every step is
// collective (distributed/collective.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "distributed/collective.h"
#include "distributed/rank_messages.h"
#include "io/byte_stream.h"
#include "lcrwmd/error.h"
#include "lcrwmd/rank_shards.h"
#include "lcrwmd/segments.h"
#include "lcrwmd/wire.h"
#include "methods/method_impl.h"
#include "search/parts_merge.h"

namespace lcrwmd {
namespace {

using collective::attempt;
using collective::settle;

// The exact distances each rank solves for its estimate of a query's k-th best: together twice
// k (at most k each), so that the estimate's k-th is close to the true one where the best
// documents are spread unevenly; k each, or k/ranks, left more EMD solves (BENCHMARKS.md,
// "Shards and MPI").
std::size_t estimate_size(std::size_t k, std::size_t ranks) {
  return std::clamp<std::size_t>((2 * k + ranks - 1) / ranks, 1, k);
}

// The ranks' blocks (rows x each rank's documents, in rank order) side by side: rows over the
// collection's documents, each rank's from its first (an Error naming a rank whose block is not
// its size).
template <typename T>
std::vector<T> side_by_side(const std::vector<std::vector<T>>& blocks, std::size_t rows,
                            const std::vector<std::size_t>& first) {
  const std::size_t n = first.back();
  std::vector<T> out(rows * n);
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    const std::size_t width = first[r + 1] - first[r];
    if (blocks[r].size() != rows * width)
      throw Error("rank " + std::to_string(r) + ": a damaged message");
    for (std::size_t q = 0; q < rows; ++q)
      std::copy_n(blocks[r].begin() + static_cast<std::ptrdiff_t>(q * width), width,
                  out.begin() + static_cast<std::ptrdiff_t>(q * n + first[r]));
  }
  return out;
}

}  // namespace

SearchResults RankShards::top_k(const QuerySet& queries, std::size_t k,
                                const SearchOptions& options, SearchStats* stats) const {
  if (implementation(options.method).segments.evidence)  // rank 0's queries, rank 0's rows
    return top_k_of_rows(queries.size(), n_docs(), k, [&](const RowSink& sink) {
      all_distances(queries, options, sink, stats);
    });
  const QuerySet q = receive_queries(queries);
  SearchOptions o = options;
  SearchStats local_stats;
  std::vector<float> ceilings;
  if (comm_.size() > 1 && options.prune && k > 0 && !options.estimate &&
      options.method->costly_exact) {
    ceilings = shared_ceilings(q, k, options, local_stats);
    o.ceilings = ceilings;
  }
  SearchResults local;
  const std::string error = attempt([&] {
    SearchStats st;
    local = searcher_->search(q, k, o, &st);
    accumulate(local_stats, st);
  });
  const std::vector<std::string> parts =
      comm_.gather(rank_messages::results(error, local, local_stats));
  SearchResults out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      SearchStats total;
      out = merge(parts, q.size(), std::min(k, n_docs()), total);
      if (stats) *stats = total;
    });
  settle(comm_, verdict);
  return out;
}

std::vector<float> RankShards::shared_ceilings(const QuerySet& queries, std::size_t k,
                                               const SearchOptions& options,
                                               SearchStats& stats) const {
  SearchResults estimate;
  const std::string error = attempt([&] {
    SearchOptions o = options;
    o.estimate = estimate_size(k, static_cast<std::size_t>(comm_.size()));
    o.progress = nullptr;
    SearchStats st;
    estimate = searcher_->search(queries, k, o, &st);
    st.distances = 0;  // the pairs are counted once, by the search itself
    accumulate(stats, st);
  });
  const std::vector<std::string> parts = comm_.gather(rank_messages::results(error, estimate, {}));
  const std::size_t nq = queries.size();
  Writer w;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      SearchStats none;
      const SearchResults best = merge(parts, nq, std::min(k, n_docs()), none);
      // Each k-th best of real documents, made inclusive: a rank's document with the same
      // distance may still win the tie against a later rank's.
      std::vector<float> ceilings(nq, std::numeric_limits<float>::infinity());
      for (std::size_t q = 0; q < nq && best.k > 0; ++q)
        if (best.indices[q * best.k + best.k - 1] >= 0)
          ceilings[q] = std::nextafter(best.distances[q * best.k + best.k - 1],
                                       std::numeric_limits<float>::infinity());
      if (!options.ceilings.empty())
        for (std::size_t q = 0; q < nq; ++q)
          ceilings[q] = std::min(ceilings[q], options.ceilings[q]);
      w.vec(ceilings);
    });
  settle(comm_, verdict);
  std::string bytes = w.take();
  comm_.broadcast(bytes);
  Reader r(bytes);
  return r.vec<float>();
}

SearchResults RankShards::merge(const std::vector<std::string>& parts, std::size_t nq,
                                std::size_t k, SearchStats& total) const {
  // Each rank's top-k in the collection's numbering, merged in its order.
  ShardMerge best(nq, k);
  const std::vector<SearchResults> all = rank_messages::read_results(parts, total);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].n_queries != nq) throw Error("rank " + std::to_string(r) + ": a damaged message");
    best.add(all[r], static_cast<std::int64_t>(first_[r]));
  }
  return best.take();
}

void RankShards::all_distances(const QuerySet& queries, const SearchOptions& options,
                               const RowSink& sink, SearchStats* stats) const {
  const QuerySet local = receive_queries(queries);
  // Blocks of rows as CollectionSearcher makes them (the same on every rank: n is the
  // collection's).
  const std::size_t nq = local.size(), n = n_docs(), ns = mine_->n_docs();
  const bool evidence = implementation(options.method).segments.evidence != nullptr;
  const std::size_t chunk = pairwise_rows_at_once(n, nq);
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats mine;
  std::vector<float> rows;
  for (std::size_t begin = 0; begin < nq; begin += chunk) {
    const std::size_t end = std::min(nq, begin + chunk);
    if (evidence) {
      rows = whole_rows(local, begin, end, o, mine);
      if (comm_.rank() == 0) {
        sink(begin, end - begin, rows.data());
        if (options.progress) options.progress(end, nq);
      }
      continue;
    }
    const std::vector<std::string> parts =
        comm_.gather(rank_messages::rows(*searcher_, local, begin, end, ns, o, mine));
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] {
        rows = side_by_side(rank_messages::read_rows(parts), end - begin, first_);
        sink(begin, end - begin, rows.data());
        if (options.progress) options.progress(end, nq);
      });
    settle(comm_, verdict);
  }
  rank_messages::sum_stats(comm_, mine, stats);
}

std::vector<float> RankShards::whole_rows(const QuerySet& queries, std::size_t begin,
                                          std::size_t end, const SearchOptions& options,
                                          SearchStats& stats) const {
  const SegmentsWay& way = implementation(options.method).segments;
  const QuerySet part = subset(queries, begin, end);
  const std::size_t ns = mine_->n_docs(), n = n_docs(), rows = end - begin;
  // This rank's evidence over its live documents, from its searcher's rows...
  Evidence own;
  const std::string error = attempt([&] {
    own = way.evidence(
        searched(),
        [&](const SearchOptions& o, float* into) {
          SearchStats st;
          searcher_->pairwise(
              part, o,
              [&](std::size_t first, std::size_t count, const float* d) {
                std::copy(d, d + count * ns, into + first * ns);
              },
              &st);
          accumulate(stats, st);
        },
        part, options);
  });
  const std::vector<std::string> parts = comm_.gather(rank_messages::evidence(error, own));
  // ...every rank's side by side on rank 0, and the answer from the whole collection's.
  std::vector<float> out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      std::vector<std::vector<float>> distances;
      std::vector<std::vector<double>> scores;
      for (Evidence& e : rank_messages::read_evidence(parts)) {
        distances.push_back(std::move(e.distances));
        scores.push_back(std::move(e.scores));
      }
      Evidence whole{side_by_side(distances, rows, first_), side_by_side(scores, rows, first_)};
      way.answer(whole, n, options);
      out = std::move(whole.distances);
    });
  settle(comm_, verdict);
  return out;
}

}  // namespace lcrwmd
