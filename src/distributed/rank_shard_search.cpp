// RankShards (lcrwmd/sharded.h): search, with WMD's shared k-th best, and pairwise. Every step
// is collective (distributed/collective.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "distributed/collective.h"
#include "distributed/rank_messages.h"
#include "distributed/shard_merge.h"
#include "io/byte_stream.h"
#include "lcrwmd/error.h"
#include "lcrwmd/sharded.h"
#include "lcrwmd/wire.h"

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

// A method whose distances need the whole collection's statistics (hybrid) over several ranks:
// an OptionError (the ranks do not share their distances' moments).
void check_ranks(const SearchOptions& o, std::size_t ranks) {
  if (ranks > 1 && o.method->needs == Needs::whole_rows)
    throw OptionError("method", std::string(to_string(o.method)) +
                                    " standardises its evidence over all the documents, which " +
                                    std::to_string(ranks) +
                                    " ranks do not share: search them with bm25 or lc-rwmd "
                                    "query-to-document, or in one process");
}

}  // namespace

SearchResults RankShards::top_k(const QuerySet& queries, std::size_t k,
                                const SearchOptions& options, SearchStats* stats) const {
  check_ranks(options, static_cast<std::size_t>(comm_.size()));
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
  check_ranks(options, static_cast<std::size_t>(comm_.size()));
  const QuerySet local = receive_queries(queries);
  // Blocks of rows as ShardedSearcher makes them (the same on every rank: n is the collection's).
  const std::size_t nq = local.size(), n = n_docs(), ns = shard_.n_docs();
  const std::size_t chunk = pairwise_rows_at_once(n, nq);
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats mine;
  std::vector<float> rows;
  for (std::size_t begin = 0; begin < nq; begin += chunk) {
    const std::size_t end = std::min(nq, begin + chunk);
    const std::vector<std::string> parts =
        comm_.gather(rank_messages::rows(*searcher_, local, begin, end, ns, o, mine));
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] {
        const std::vector<std::vector<float>> blocks = rank_messages::read_rows(parts);
        rows.assign((end - begin) * n, 0.0f);
        for (std::size_t r = 0; r < blocks.size(); ++r) {
          const std::size_t width = first_[r + 1] - first_[r];
          if (blocks[r].size() != (end - begin) * width)
            throw Error("rank " + std::to_string(r) + ": a damaged message");
          for (std::size_t q = 0; q < end - begin; ++q)
            std::copy(blocks[r].begin() + static_cast<std::ptrdiff_t>(q * width),
                      blocks[r].begin() + static_cast<std::ptrdiff_t>((q + 1) * width),
                      rows.begin() + static_cast<std::ptrdiff_t>(q * n + first_[r]));
        }
        sink(begin, end - begin, rows.data());
        if (options.progress) options.progress(end, nq);
      });
    settle(comm_, verdict);
  }
  rank_messages::sum_stats(comm_, mine, stats);
}

}  // namespace lcrwmd
