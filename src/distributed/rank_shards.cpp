// RankShards (lcrwmd/sharded.h): a shard per rank; here the ranks' agreement, the queries and
// the documents' ids and texts (rank_shard_search.cpp: search and pairwise). Every step is
// collective and ends with every rank knowing whether any failed (a rank's error travels in its
// message; rank 0's verdict is broadcast), so that no rank is left waiting in a step the others
// have left.
#include <algorithm>
#include <cstring>

#include "core/query_words.h"
#include "core/shard_signature.h"
#include "distributed/collective.h"
#include "io/byte_stream.h"
#include "lcrwmd/communicator.h"
#include "lcrwmd/error.h"
#include "lcrwmd/sharded.h"
#include "lcrwmd/wire.h"

namespace lcrwmd {
namespace {

using collective::attempt;
using collective::first_error;
using collective::settle;

// A shard's signature (core/shard_signature.h) as its rank sends it.
void write(Writer& w, const ShardSignature& s) {
  w.strings({s.source});
  w.pod(s.n_docs);
  w.pod(s.dim);
  w.pod(s.idf_docs);
  w.pod(static_cast<std::uint32_t>(s.weighting));
  w.pod(s.tokenizer);
  w.strings(s.stopwords);
  w.pod(s.vocab_size);
  w.pod(s.vocabulary);
  w.pod(s.unit_vectors);
  w.pod(s.metric);
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
  s.vocab_size = r.pod<std::uint64_t>();
  s.vocabulary = r.pod<std::uint64_t>();
  s.unit_vectors = r.pod<std::uint32_t>();
  s.metric = r.pod<std::uint64_t>();
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
  std::uint64_t shared = 1;
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
    for (const ShardSignature& s : signatures) {
      first.push_back(first.back() + s.n_docs);
      shared &= s.same_vocabulary(signatures.front());
    }
  }
  settle(comm, verdict);
  Writer out;
  out.vec(first);
  out.pod(shared);
  std::string bytes = out.take();
  comm.broadcast(bytes);
  Reader r(bytes);
  for (const std::uint64_t f : r.vec<std::uint64_t>()) first_.push_back(f);
  shared_vocabulary_ = r.pod<std::uint64_t>() != 0;
}

RankShards::~RankShards() = default;

QuerySet RankShards::make_query_set(const std::vector<RawDocument>& docs,
                                    const QueryOptions& options, TextReport* report) {
  if (shared_vocabulary_) {  // rank 0's shard has every rank's words
    QuerySet out;
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] { out = lcrwmd::make_query_set(shard_, docs, options, report); });
    settle(comm_, verdict);
    return out;
  }
  // Rank 0's tokens (stop words aside), for every rank to look up.
  std::string bytes;
  if (comm_.rank() == 0) {
    const WordSet distinct = distinct_tokens(docs, shard_.tokenizer_version());
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
      const WordVectors* emb = options.embeddings;
      std::vector<float> looked_up(m);
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
          if (emb && query_word_lookup(shard_, *emb, t, looked_up.data()) &&
              std::memcmp(looked_up.data(), word.vector, m * sizeof(float)) != 0)
            throw Error(emb->source() + ": the word '" + t + "' has another vector than in rank " +
                        std::to_string(r) + "'s shard: not the embeddings it was built from");
        }
      }
      const FindExtraWord other_ranks = [&](std::string_view t) -> std::optional<ExtraWord> {
        if (const auto it = found.find(t); it != found.end()) return it->second;
        return std::nullopt;
      };
      // Shards built apart count their own documents: IDF would need every rank's counts summed.
      if (options.weights == QueryWeights::idf && shard_.idf_docs() == shard_.n_docs())
        throw Error(shard_.source() +
                    ": IDF query weights over shards built apart are not computed under mpirun "
                    "(each counts only its own documents); build them as one build's shards "
                    "(lcrwmd build --shards N), or use query weights 'index'");
      // BM25 likewise: without every rank's term counts, its queries carry no IDF (and bm25
      // refuses them).
      const bool apart = shard_.idf_docs() == shard_.n_docs() && comm_.size() > 1;
      out = portable_queries(
          shard_, make_query_set_with(shard_, docs, shard_.idf_docs(), other_ranks, options, report,
                                      apart ? std::nullopt : term_statistics(shard_)));
    });
  settle(comm_, verdict);
  return out;
}

QuerySet RankShards::receive_queries(const QuerySet& queries) const {
  std::string bytes = comm_.rank() == 0 ? pack(queries) : std::string();
  comm_.broadcast(bytes);
  QuerySet local;
  collective::settle_errors(comm_, attempt([&] {
                              local = shared_vocabulary_
                                          ? unpack_queries(bytes)
                                          : from_portable(unpack_queries(bytes), shard_);
                            }));
  return local;
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
