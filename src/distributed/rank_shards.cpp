// RankShards (lcrwmd/segments.h): a part of the collection per rank; here the ranks' agreement,
// the queries (weighted by the collection's statistics) and the documents' ids and texts
// (rank_shard_search.cpp: search and pairwise). Every step is collective and ends with every rank
// knowing whether any failed (a rank's error travels in its message; rank 0's verdict is
// broadcast), so that no rank is left waiting in a step the others have left.
#include "lcrwmd/rank_shards.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/query_words.h"
#include "core/shard_signature.h"
#include "distributed/collective.h"
#include "io/byte_stream.h"
#include "lcrwmd/communicator.h"
#include "lcrwmd/error.h"
#include "lcrwmd/segments.h"
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
    : comm_(comm), own_(std::in_place, std::vector<const Index*>{&shard}), mine_(&*own_) {
  start(options);
}

RankShards::RankShards(Communicator& comm, const SegmentSet& mine, const SearcherOptions& options)
    : comm_(comm), mine_(&mine) {
  start(options);
}

void RankShards::start(const SearcherOptions& options) {
  const SegmentSet& mine = *mine_;
  Communicator& comm = comm_;
  // Its first index's signature, for its live documents; and whether it is one index whole.
  Writer w;
  ShardSignature signature = ShardSignature::of(mine.segment(0));
  signature.n_docs = mine.n_docs();
  write(w, signature);
  w.pod(std::uint64_t{mine.size() == 1 && !mine.has_deletions()});
  const std::vector<std::string> parts = comm.gather(w.take());
  std::string verdict;
  std::vector<std::uint64_t> first{0};
  std::uint64_t shared = 1;
  if (comm.rank() == 0)
    verdict = attempt([&] {
      std::vector<ShardSignature> signatures;
      for (const std::string& p : parts) {
        Reader r(p);
        signatures.push_back(read_signature(r));
        shared &= r.pod<std::uint64_t>();
      }
      for (std::size_t s = 1; s < signatures.size(); ++s)
        if (const std::string why = shard_disagreement(signatures.front(), signatures[s]);
            !why.empty())
          throw Error(why);
      for (const ShardSignature& s : signatures) {
        first.push_back(first.back() + s.n_docs);
        shared &= s.same_vocabulary(signatures.front());
      }
      // Parts of one index hold its statistics, and queries over its vocabulary fit them all.
      for (const ShardSignature& s : signatures) shared &= s.idf_docs == first.back();
    });
  settle(comm, verdict);
  Writer out;
  out.vec(first);
  out.pod(shared);
  std::string bytes = out.take();
  comm.broadcast(bytes);
  Reader r(bytes);
  for (const std::uint64_t f : r.vec<std::uint64_t>()) first_.push_back(f);
  shared_vocabulary_ = r.pod<std::uint64_t>() != 0;
  // Its searcher: over its part, reading portable queries unless they are over the shared
  // vocabulary.
  collective::settle_errors(comm, attempt([&] {
                              if (!shared_vocabulary_)
                                portable_.emplace(mine.reading_portable_queries());
                              searcher_ = std::make_unique<CollectionSearcher>(searched(), options);
                            }));
}

RankShards::~RankShards() = default;

namespace {

// What a rank's part says of rank 0's tokens: the vector and document frequency of those it
// holds; and, where its statistics count its own documents only, its share of the collection's
// (lcrwmd/collection_statistics.h) for every token.
struct TokensHeld {
  std::vector<std::uint64_t> held;  // positions in the token list
  std::vector<float> vectors;       // dim each
  std::vector<std::uint32_t> freqs;
  std::uint64_t docs = 0, has_terms = 0;
  double tokens = 0;
  std::vector<std::uint64_t> word_docs, term_docs;  // every token's
};

std::string write(const TokensHeld& t) {
  Writer w;
  w.vec(t.held);
  w.vec(t.vectors);
  w.vec(t.freqs);
  w.pod(t.docs);
  w.pod(t.has_terms);
  w.pod(t.tokens);
  w.vec(t.word_docs);
  w.vec(t.term_docs);
  return w.take();
}

// The collection's statistics from the ranks' shares of them for the tokens: their sums.
CollectionStatistics summed(const std::vector<TokensHeld>& ranks,
                            const std::vector<std::string>& tokens) {
  auto word_docs = std::make_shared<StringMap<std::size_t>>(),
       term_docs = std::make_shared<StringMap<std::size_t>>();
  CollectionStatistics whole;
  bool terms = true;
  for (const TokensHeld& t : ranks) {
    whole.docs += t.docs;
    whole.tokens += t.tokens;
    terms = terms && t.has_terms;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      (*word_docs)[tokens[i]] += t.word_docs[i];
      if (t.has_terms) (*term_docs)[tokens[i]] += t.term_docs[i];
    }
  }
  const auto count = [](const StringMap<std::size_t>& counts, std::string_view key) {
    const auto it = counts.find(key);
    return it == counts.end() ? std::size_t{0} : it->second;
  };
  whole.word_docs = [word_docs, count](std::string_view w) { return count(*word_docs, w); };
  if (terms)
    whole.term_docs = [term_docs, count](std::string_view t) { return count(*term_docs, t); };
  return whole;
}

TokensHeld read_tokens_held(const std::string& bytes, std::size_t r, std::size_t dim,
                            std::size_t n_tokens, bool sums) {
  Reader in(bytes);
  TokensHeld t;
  t.held = in.vec<std::uint64_t>();
  t.vectors = in.vec<float>();
  t.freqs = in.vec<std::uint32_t>();
  t.docs = in.pod<std::uint64_t>();
  t.has_terms = in.pod<std::uint64_t>();
  t.tokens = in.pod<double>();
  t.word_docs = in.vec<std::uint64_t>();
  t.term_docs = in.vec<std::uint64_t>();
  const bool counted = !sums || (t.word_docs.size() == n_tokens &&
                                 t.term_docs.size() == (t.has_terms ? n_tokens : 0));
  if (t.vectors.size() != t.held.size() * dim || t.freqs.size() != t.held.size() || !counted)
    throw Error("rank " + std::to_string(r) + ": a damaged message");
  for (const std::uint64_t i : t.held)
    if (i >= n_tokens) throw Error("rank " + std::to_string(r) + ": a damaged message");
  return t;
}

}  // namespace

QuerySet RankShards::make_query_set(const std::vector<RawDocument>& docs,
                                    const QueryOptions& options, TextReport* report) {
  const Index& first = mine_->segment(0);
  if (shared_vocabulary_) {  // rank 0's index has every rank's words and the whole's statistics
    QuerySet out;
    std::string verdict;
    if (comm_.rank() == 0)
      verdict = attempt([&] { out = lcrwmd::make_query_set(first, docs, options, report); });
    settle(comm_, verdict);
    return out;
  }
  // Rank 0's tokens (stop words aside), for every rank to look up; and whether the ranks' parts
  // count only their own documents (built apart), so that the collection's statistics are their
  // sums (rank 0's part says for all: the parts agree, ShardSignature).
  std::string bytes;
  if (comm_.rank() == 0) {
    const WordSet distinct = distinct_tokens(docs, first.tokenizer_version());
    std::vector<std::string> tokens;
    for (const std::string& t : distinct)
      if (!first.stopwords().contains(t)) tokens.push_back(t);
    std::sort(tokens.begin(), tokens.end());
    Writer w;
    w.strings(tokens);
    w.pod(std::uint64_t{comm_.size() > 1 && first.idf_docs() == first.n_docs()});
    bytes = w.take();
  }
  comm_.broadcast(bytes);
  Reader tokens_in(bytes);
  const std::vector<std::string> tokens = tokens_in.strings();
  const bool sums = tokens_in.pod<std::uint64_t>() != 0;
  // Those this rank's part holds: their vectors and document frequencies; and its statistics.
  TokensHeld mine;
  const std::size_t m = first.dim();
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (const auto at = mine_->find_word(tokens[i])) {
      const Index& holder = mine_->segment(at->segment);
      mine.held.push_back(i);
      mine.vectors.insert(mine.vectors.end(), holder.vector(at->word), holder.vector(at->word) + m);
      mine.freqs.push_back(holder.doc_freq(at->word));
    }
  if (sums) {
    const CollectionStatistics own = mine_->statistics();
    mine.docs = own.docs;
    mine.tokens = own.tokens;
    mine.has_terms = own.term_docs ? 1 : 0;
    std::size_t h = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const bool held = h < mine.held.size() && mine.held[h] == i;
      mine.word_docs.push_back(own.word_docs ? own.word_docs(tokens[i]) : held ? mine.freqs[h] : 0);
      if (own.term_docs) mine.term_docs.push_back(own.term_docs(tokens[i]));
      h += held ? 1 : 0;
    }
  }
  const std::vector<std::string> parts = comm_.gather(write(mine));
  QuerySet out;
  std::string verdict;
  if (comm_.rank() == 0)
    verdict = attempt([&] {
      // Each token from the first rank holding it; a word two ranks (or the embeddings) hold
      // with different vectors is an error: the parts are not of one collection.
      const WordVectors* emb = options.embeddings;
      std::vector<float> looked_up(m);
      check_query_embeddings_dim(first, emb);  // before its vectors are compared with the ranks'
      std::vector<TokensHeld> ranks;
      StringMap<ExtraWord> found;
      StringMap<std::size_t> holder;
      for (std::size_t r = 0; r < parts.size(); ++r) {
        const TokensHeld& t =
            ranks.emplace_back(read_tokens_held(parts[r], r, m, tokens.size(), sums));
        for (std::size_t i = 0; i < t.held.size(); ++i) {
          const std::string& token = tokens[t.held[i]];
          const ExtraWord word{t.vectors.data() + i * m, t.freqs[i]};
          const auto [it, fresh] = found.try_emplace(token, word);
          if (fresh) {
            holder.emplace(token, r);
          } else if (std::memcmp(it->second.vector, word.vector, m * sizeof(float)) != 0 ||
                     (first.weighting() == Weighting::tfidf &&
                      it->second.doc_freq != word.doc_freq)) {
            throw Error("the word '" + token + "' differs between the parts of ranks " +
                        std::to_string(holder.at(token)) + " and " + std::to_string(r) +
                        ": not parts of one collection");
          }
          if (emb && query_word_lookup(first, *emb, token, looked_up.data()) &&
              std::memcmp(looked_up.data(), word.vector, m * sizeof(float)) != 0)
            throw Error(emb->source() + ": the word '" + token +
                        "' has another vector than in rank " + std::to_string(r) +
                        "'s part: not the embeddings it was built from");
        }
      }
      const FindExtraWord other_ranks = [&](std::string_view t) -> std::optional<ExtraWord> {
        if (const auto it = found.find(t); it != found.end()) return it->second;
        return std::nullopt;
      };
      // One build's parts each hold the build's statistics: rank 0's answer for all. Parts built
      // apart: the collection's are the sums of every rank's.
      const CollectionStatistics whole = sums ? summed(ranks, tokens) : statistics_of(first);
      out = portable_queries(first,
                             make_query_set_with(first, docs, other_ranks, options, report, whole));
    });
  settle(comm_, verdict);
  return out;
}

QuerySet RankShards::receive_queries(const QuerySet& queries) const {
  std::string bytes = comm_.rank() == 0 ? pack(queries) : std::string();
  comm_.broadcast(bytes);
  QuerySet local;
  collective::settle_errors(comm_, attempt([&] {
                              local = unpack_queries(bytes);  // as its searcher reads them
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
      values.push_back(text ? mine_->text(i) : std::string(mine_->doc_id(i)));
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
