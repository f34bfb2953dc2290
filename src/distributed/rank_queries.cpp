// RankQueries (lcrwmd/rank_queries.h): the queries spread over the ranks, every rank the whole
// index. Every step ends with every rank knowing whether any failed (distributed/collective.h).
#include "lcrwmd/rank_queries.h"

#include <algorithm>
#include <string>
#include <vector>

#include "distributed/collective.h"
#include "distributed/rank_messages.h"
#include "io/byte_stream.h"
#include "lcrwmd/error.h"
#include "lcrwmd/wire.h"
#include "search/parts_merge.h"

namespace lcrwmd {
namespace {

using collective::attempt;
using collective::first_error;
using collective::settle;

// Items [begin, end) of rank r when n are split into near-equal contiguous parts.
std::pair<std::size_t, std::size_t> part_of(std::size_t n, int rank, int size) {
  const auto r = static_cast<std::size_t>(rank), p = static_cast<std::size_t>(size);
  return {n * r / p, n * (r + 1) / p};
}

}  // namespace

RankQueries::RankQueries(Communicator& comm, const Index& index, const SearcherOptions& options)
    : comm_(comm), index_(index) {
  Writer w;
  w.strings({attempt([&] { searcher_ = make_searcher(index, options); })});
  w.pod(static_cast<std::uint64_t>(index.n_docs()));
  w.pod(static_cast<std::uint64_t>(index.vocab_size()));
  w.pod(static_cast<std::uint64_t>(index.dim()));
  const std::vector<std::string> parts = comm.gather(w.take());
  std::string verdict;
  if (comm.rank() == 0)
    verdict = attempt([&] {
      std::vector<std::string> errors;
      std::vector<std::uint64_t> first;
      for (std::size_t r = 0; r < parts.size(); ++r) {
        Reader in(parts[r]);
        errors.push_back(in.strings().at(0));
        const std::uint64_t sizes[] = {in.pod<std::uint64_t>(), in.pod<std::uint64_t>(),
                                       in.pod<std::uint64_t>()};
        if (r == 0) first.assign(std::begin(sizes), std::end(sizes));
        if (errors.back().empty() && !std::equal(first.begin(), first.end(), sizes))
          throw Error("rank " + std::to_string(r) + "'s index (" + std::to_string(sizes[0]) +
                      " documents, " + std::to_string(sizes[1]) + " words, dimension " +
                      std::to_string(sizes[2]) + ") is not rank 0's (" + std::to_string(first[0]) +
                      ", " + std::to_string(first[1]) + ", " + std::to_string(first[2]) +
                      "): give every rank the same index");
      }
      if (const std::string e = first_error(errors); !e.empty()) throw Error(e);
    });
  settle(comm, verdict);
}

RankQueries::~RankQueries() = default;

QuerySet RankQueries::receive_queries(const QuerySet& queries) const {
  std::string bytes = comm_.rank() == 0 ? pack(queries) : std::string();
  comm_.broadcast(bytes);
  QuerySet all;
  collective::settle_errors(comm_, attempt([&] { all = unpack_queries(bytes); }));
  return all;
}

SearchResults RankQueries::top_k(const QuerySet& queries, std::size_t k,
                                 const SearchOptions& options, SearchStats* stats) const {
  const QuerySet all = receive_queries(queries);
  // Not a structured binding: the lambda below captures them.
  const auto mine = part_of(all.size(), comm_.rank(), comm_.size());
  const std::size_t begin = mine.first, end = mine.second;
  SearchResults local;
  SearchStats local_stats;
  SearchOptions o = options;
  o.progress = nullptr;
  const std::string error = attempt([&] {
    if (!options.ceilings.empty()) o.ceilings = options.ceilings.subspan(begin, end - begin);
    local = searcher_->search(subset(all, begin, end), k, o, &local_stats);
  });
  const std::vector<std::string> parts =
      comm_.gather(rank_messages::results(error, local, local_stats));
  SearchResults out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      SearchStats total;
      const std::vector<SearchResults> all_parts = rank_messages::read_results(parts, total);
      // The ranks' rows, one after another: the queries in order.
      out.n_queries = all.size();
      out.k = std::min(k, index_.n_docs());
      for (std::size_t r = 0; r < all_parts.size(); ++r) {
        const SearchResults& part = all_parts[r];
        const auto [b, e] = part_of(all.size(), static_cast<int>(r), comm_.size());
        if (part.n_queries != e - b || part.distances.size() != part.n_queries * out.k)
          throw Error("rank " + std::to_string(r) + ": a damaged message");
        out.distances.insert(out.distances.end(), part.distances.begin(), part.distances.end());
        out.indices.insert(out.indices.end(), part.indices.begin(), part.indices.end());
      }
      if (stats) *stats = total;
      if (options.progress) options.progress(all.size(), all.size());
    });
  settle(comm_, verdict);
  return out;
}

void RankQueries::all_distances(const QuerySet& queries, const SearchOptions& options,
                                const RowSink& sink, SearchStats* stats) const {
  const QuerySet all = receive_queries(queries);
  const std::size_t nq = all.size(), n = index_.n_docs();
  const auto ranks = static_cast<std::size_t>(comm_.size());
  const auto me = static_cast<std::size_t>(comm_.rank());
  // Each round, rank r computes block round * ranks + r: the round's blocks are consecutive
  // rows, which rank 0 hands on in rank order. A round holds what CollectionSearcher puts
  // together at once.
  const std::size_t block = std::max<std::size_t>(1, pairwise_rows_at_once(n, nq) / ranks);
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats mine;
  for (std::size_t round_begin = 0; round_begin < nq; round_begin += block * ranks) {
    const std::size_t begin = std::min(nq, round_begin + me * block);
    const std::size_t end = std::min(nq, begin + block);
    const std::vector<std::string> parts =
        comm_.gather(rank_messages::rows(*searcher_, all, begin, end, n, o, mine));
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] {
        const std::vector<std::vector<float>> blocks = rank_messages::read_rows(parts);
        for (std::size_t r = 0; r < ranks; ++r) {
          const std::size_t b = std::min(nq, round_begin + r * block);
          const std::size_t e = std::min(nq, b + block);
          if (blocks.at(r).size() != (e - b) * n)
            throw Error("rank " + std::to_string(r) + ": a damaged message");
          if (e > b) sink(b, e - b, blocks[r].data());
        }
        if (options.progress) options.progress(std::min(nq, round_begin + block * ranks), nq);
      });
    settle(comm_, verdict);
  }
  rank_messages::sum_stats(comm_, mine, stats);
}

}  // namespace lcrwmd
