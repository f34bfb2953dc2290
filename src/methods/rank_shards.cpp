// RankShards (lcrwmd/sharded.h): a shard per rank. Every step is collective and ends with every
// rank knowing whether any failed (a rank's error travels in its message; rank 0's verdict is
// broadcast), so that no rank is left waiting in a step the others have left.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>

#include "core/query_words.h"
#include "core/shard_signature.h"
#include "io/byte_stream.h"
#include "lcrwmd/communicator.h"
#include "lcrwmd/error.h"
#include "lcrwmd/sharded.h"
#include "lcrwmd/wire.h"
#include "methods/shard_merge.h"

namespace lcrwmd {
namespace {

// f's error, or empty.
template <typename F>
std::string attempt(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return *e.what() ? e.what() : "unknown error";
  }
}

// Rank 0's verdict on every rank: an Error everywhere where it is not empty.
void settle(Communicator& comm, std::string verdict) {
  comm.broadcast(verdict);
  if (!verdict.empty()) throw Error(verdict);
}

// The exact distances each rank solves for its estimate of a query's k-th best: together twice
// k (at most k each), so that the estimate's k-th is close to the true one where the best
// documents are spread unevenly. (20news WMD top-10, 100 queries: at 8 ranks 2k/ranks each
// left 4,844 EMD solves where each rank alone made 12,108, and 17% less CPU time; k each, or
// k/ranks, left more.)
std::size_t estimate_size(std::size_t k, std::size_t ranks) {
  return std::clamp<std::size_t>((2 * k + ranks - 1) / ranks, 1, k);
}

// The first rank's error among the gathered messages' leading strings, worded for all.
std::string first_error(const std::vector<std::string>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty())
      return "rank " + std::to_string(r) + " of " + std::to_string(errors.size()) + ": " +
             errors[r];
  return {};
}

// A shard's signature (core/shard_signature.h) as its rank sends it.
void write(Writer& w, const ShardSignature& s) {
  w.strings({s.source});
  w.pod(s.n_docs);
  w.pod(s.dim);
  w.pod(s.idf_docs);
  w.pod(static_cast<std::uint32_t>(s.weighting));
  w.pod(s.tokenizer);
  w.strings(s.stopwords);
}

ShardSignature read_signature(Reader& r) {
  ShardSignature s;
  s.source = r.strings().at(0);
  s.n_docs = r.pod<std::uint64_t>();
  s.dim = r.pod<std::uint64_t>();
  s.idf_docs = r.pod<std::uint64_t>();
  s.weighting = static_cast<Weighting>(r.pod<std::uint32_t>());
  s.tokenizer = r.pod<std::uint32_t>();
  s.stopwords = r.strings();
  return s;
}

}  // namespace

RankShards::RankShards(Communicator& comm, const Index& shard, const SearcherOptions& options)
    : comm_(comm), shard_(shard) {
  Writer w;
  w.strings({attempt([&] { searcher_ = make_searcher(shard, options); })});
  write(w, ShardSignature::of(shard));
  const std::vector<std::string> parts = comm.gather(w.take());
  std::string verdict;
  std::vector<std::uint64_t> first{0};
  if (comm.rank() == 0) {
    std::vector<std::string> errors;
    std::vector<ShardSignature> signatures;
    verdict = attempt([&] {
      for (const std::string& p : parts) {
        Reader r(p);
        errors.push_back(r.strings().at(0));
        signatures.push_back(read_signature(r));
      }
    });
    if (verdict.empty()) verdict = first_error(errors);
    for (std::size_t s = 1; s < signatures.size() && verdict.empty(); ++s)
      verdict = shard_disagreement(signatures.front(), signatures[s]);
    for (const ShardSignature& s : signatures) first.push_back(first.back() + s.n_docs);
  }
  settle(comm, verdict);
  Writer out;
  out.vec(first);
  std::string bytes = out.take();
  comm.broadcast(bytes);
  Reader r(bytes);
  for (const std::uint64_t f : r.vec<std::uint64_t>()) first_.push_back(f);
}

RankShards::~RankShards() = default;

QuerySet RankShards::make_query_set(const std::vector<RawDocument>& docs,
                                    const QueryOptions& options, TextReport* report) {
  // Rank 0's tokens (stop words aside), for every rank to look up.
  std::string bytes;
  if (comm_.rank() == 0) {
    const WordSet distinct = distinct_tokens(docs);
    std::vector<std::string> tokens;
    for (const std::string& t : distinct)
      if (!shard_.stopwords().contains(t)) tokens.push_back(t);
    std::sort(tokens.begin(), tokens.end());
    Writer w;
    w.strings(tokens);
    bytes = w.take();
  }
  comm_.broadcast(bytes);
  Reader tokens_in(bytes);
  const std::vector<std::string> tokens = tokens_in.strings();
  // Those this rank's shard holds: their vectors and document frequencies.
  std::vector<std::uint64_t> held;
  std::vector<float> vectors;
  std::vector<std::uint32_t> freqs;
  const std::size_t m = shard_.dim();
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (const auto u = shard_.find_word(tokens[i])) {
      held.push_back(i);
      vectors.insert(vectors.end(), shard_.vector(*u), shard_.vector(*u) + m);
      freqs.push_back(shard_.doc_freq(*u));
    }
  Writer w;
  w.vec(held);
  w.vec(vectors);
  w.vec(freqs);
  const std::vector<std::string> parts = comm_.gather(w.take());
  QuerySet out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      // Each token from the first rank holding it; a word two ranks (or the embeddings) hold
      // with different vectors is an error: the shards are not of one collection.
      const Embeddings* emb = options.embeddings;
      check_query_embeddings_dim(shard_, emb);  // before its vectors are compared with the ranks'
      std::vector<std::vector<float>> rank_vectors(parts.size());
      StringMap<ExtraWord> found;
      StringMap<std::size_t> holder;
      for (std::size_t r = 0; r < parts.size(); ++r) {
        Reader in(parts[r]);
        const auto idx = in.vec<std::uint64_t>();
        rank_vectors[r] = in.vec<float>();
        const auto df = in.vec<std::uint32_t>();
        if (rank_vectors[r].size() != idx.size() * m || df.size() != idx.size())
          throw Error("rank " + std::to_string(r) + ": a damaged message");
        for (std::size_t i = 0; i < idx.size(); ++i) {
          const std::string& t = tokens.at(idx[i]);
          const ExtraWord word{rank_vectors[r].data() + i * m, df[i]};
          const auto [it, fresh] = found.try_emplace(t, word);
          if (fresh) {
            holder.emplace(t, r);
          } else if (std::memcmp(it->second.vector, word.vector, m * sizeof(float)) != 0 ||
                     (shard_.weighting() == Weighting::tfidf &&
                      it->second.doc_freq != word.doc_freq)) {
            throw Error("the word '" + t + "' differs between the shards of ranks " +
                        std::to_string(holder.at(t)) + " and " + std::to_string(r) +
                        ": not shards of one collection");
          }
          if (emb)
            if (const auto e = emb->find(t);
                e && std::memcmp(emb->vector(*e), word.vector, m * sizeof(float)) != 0)
              throw Error(emb->source() + ": the word '" + t +
                          "' has another vector than in rank " + std::to_string(r) +
                          "'s shard: not the embeddings it was built from");
        }
      }
      const FindExtraWord other_ranks = [&](std::string_view t) -> std::optional<ExtraWord> {
        if (const auto it = found.find(t); it != found.end()) return it->second;
        return std::nullopt;
      };
      out = portable_queries(
          shard_, make_query_set_with(shard_, docs, shard_.idf_docs(), other_ranks, emb, report));
    });
  settle(comm_, verdict);
  return out;
}

SearchResults RankShards::search(const QuerySet& queries, std::size_t k,
                                 const SearchOptions& options, SearchStats* stats) const {
  check_k(k);  // the same arguments on every rank: the same Error on every rank
  check_options(options);
  const QuerySet q = receive_queries(queries);
  SearchOptions o = options;
  SearchStats local_stats;
  std::vector<float> ceilings;
  if (comm_.size() > 1 && options.prune && k > 0 && !options.estimate &&
      describe(options.method).costly_exact) {
    ceilings = shared_ceilings(q, k, options, local_stats);
    o.ceilings = ceilings;
  }
  SearchResults local;
  const std::string error = attempt([&] {
    SearchStats st;
    local = searcher_->search(q, k, o, &st);
    accumulate(local_stats, st);
  });
  const std::vector<std::string> parts = comm_.gather(message(error, local, local_stats));
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

QuerySet RankShards::receive_queries(const QuerySet& queries) const {
  std::string bytes = comm_.rank() == 0 ? pack(queries) : std::string();
  comm_.broadcast(bytes);
  QuerySet local;
  const std::string error = attempt([&] { local = from_portable(unpack_queries(bytes), shard_); });
  const std::vector<std::string> unreadable = comm_.gather(error);
  settle(comm_, comm_.rank() == 0 ? first_error(unreadable) : std::string());
  return local;
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
  const std::vector<std::string> parts = comm_.gather(message(error, estimate, {}));
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

std::string RankShards::message(const std::string& error, const SearchResults& results,
                                const SearchStats& stats) {
  Writer w;
  w.strings({error, error.empty() ? pack(results, stats) : std::string()});
  return w.take();
}

SearchResults RankShards::merge(const std::vector<std::string>& parts, std::size_t nq,
                                std::size_t k, SearchStats& total) const {
  std::vector<std::string> errors, messages;
  for (const std::string& p : parts) {
    Reader r(p);
    const std::vector<std::string> fields = r.strings();
    errors.push_back(fields.at(0));
    messages.push_back(fields.at(1));
  }
  if (const std::string e = first_error(errors); !e.empty()) throw Error(e);
  // Each rank's top-k in the collection's numbering, merged in its order.
  ShardMerge best(nq, k);
  for (std::size_t r = 0; r < messages.size(); ++r) {
    SearchResults part;
    SearchStats st;
    unpack_results(messages[r], part, st);
    if (part.n_queries != nq) throw Error("rank " + std::to_string(r) + ": a damaged message");
    accumulate(total, st);
    best.add(part, static_cast<std::int64_t>(first_[r]));
  }
  return best.take();
}

void RankShards::pairwise(const QuerySet& queries, const SearchOptions& options,
                          const RowSink& sink, SearchStats* stats) const {
  check_options(options);
  const QuerySet local = receive_queries(queries);
  // Blocks of rows as ShardedSearcher makes them (the same on every rank: n is the collection's).
  const std::size_t nq = local.size(), n = n_docs(), ns = shard_.n_docs();
  const std::size_t chunk = pairwise_rows_at_once(n, nq);
  SearchOptions o = options;
  o.progress = nullptr;
  SearchStats mine_stats;
  std::vector<float> rows;
  for (std::size_t begin = 0; begin < nq; begin += chunk) {
    const std::size_t end = std::min(nq, begin + chunk);
    std::vector<float> mine((end - begin) * ns);
    const std::string failed = attempt([&] {
      SearchStats st;
      searcher_->pairwise(
          subset(local, begin, end), o,
          [&](std::size_t first, std::size_t count, const float* d) {
            std::copy(d, d + count * ns, mine.begin() + static_cast<std::ptrdiff_t>(first * ns));
          },
          &st);
      accumulate(mine_stats, st);
    });
    Writer w;
    w.strings({failed});
    w.vec(mine);
    const std::vector<std::string> parts = comm_.gather(w.take());
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] {
        std::vector<std::string> errors;
        rows.assign((end - begin) * n, 0.0f);
        for (std::size_t r = 0; r < parts.size(); ++r) {
          Reader in(parts[r]);
          errors.push_back(in.strings().at(0));
          const std::vector<float> block = in.vec<float>();
          const std::size_t width = first_[r + 1] - first_[r];
          if (!errors.back().empty()) continue;
          if (block.size() != (end - begin) * width)
            throw Error("rank " + std::to_string(r) + ": a damaged message");
          for (std::size_t q = 0; q < end - begin; ++q)
            std::copy(block.begin() + static_cast<std::ptrdiff_t>(q * width),
                      block.begin() + static_cast<std::ptrdiff_t>((q + 1) * width),
                      rows.begin() + static_cast<std::ptrdiff_t>(q * n + first_[r]));
        }
        if (const std::string e = first_error(errors); !e.empty()) throw Error(e);
        sink(begin, end - begin, rows.data());
        if (options.progress) options.progress(end, nq);
      });
    settle(comm_, verdict);
  }
  // The work counts, summed on rank 0.
  const std::vector<std::string> counts = comm_.gather(pack(SearchResults{}, mine_stats));
  if (comm_.rank() == 0 && stats) {
    SearchStats total;
    for (const std::string& c : counts) {
      SearchResults none;
      SearchStats st;
      unpack_results(c, none, st);
      accumulate(total, st);
    }
    *stats = total;
  }
}

std::vector<std::string> RankShards::doc_ids(const std::vector<std::int64_t>& docs) {
  return fetch(docs, false);
}

std::vector<std::string> RankShards::texts(const std::vector<std::int64_t>& docs) {
  return fetch(docs, true);
}

std::vector<std::string> RankShards::fetch(const std::vector<std::int64_t>& docs, bool text) const {
  std::string bytes;
  if (comm_.rank() == 0) {
    Writer w;
    w.vec(docs);
    bytes = w.take();
  }
  comm_.broadcast(bytes);
  Reader in(bytes);
  const std::vector<std::int64_t> asked = in.vec<std::int64_t>();
  // This rank's documents among them: their positions in the list, and their ids or texts.
  const auto rank = static_cast<std::size_t>(comm_.rank());
  std::vector<std::uint64_t> positions;
  std::vector<std::string> values;
  const std::string error = attempt([&] {
    for (std::size_t p = 0; p < asked.size(); ++p) {
      const std::int64_t d = asked[p];
      if (d < static_cast<std::int64_t>(first_[rank]) ||
          d >= static_cast<std::int64_t>(first_[rank + 1]))
        continue;
      const auto i = static_cast<std::size_t>(d) - first_[rank];
      positions.push_back(p);
      values.push_back(text ? shard_.text(i) : std::string(shard_.doc_id(i)));
    }
  });
  Writer w;
  w.strings({error});
  w.vec(positions);
  w.strings(values);
  const std::vector<std::string> parts = comm_.gather(w.take());
  std::vector<std::string> out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      out.resize(asked.size());
      std::vector<std::string> errors;
      for (const std::string& p : parts) {
        Reader r(p);
        errors.push_back(r.strings().at(0));
        const auto pos = r.vec<std::uint64_t>();
        const auto vals = r.strings();
        for (std::size_t i = 0; i < pos.size() && i < vals.size(); ++i) out.at(pos[i]) = vals[i];
      }
      if (const std::string e = first_error(errors); !e.empty()) throw Error(e);
    });
  settle(comm_, verdict);
  return out;
}

}  // namespace lcrwmd
