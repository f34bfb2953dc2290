// A collection of shards (lcrwmd/sharded.h): their agreement checked once, documents found by
// their place in the collection, queries read over every shard's words.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/query_words.h"
#include "core/shard_signature.h"
#include "lcrwmd/error.h"
#include "lcrwmd/sharded.h"

namespace lcrwmd {
ShardSet::ShardSet(std::vector<const Index*> shards) : shards_(std::move(shards)) {
  if (shards_.empty()) throw Error("a collection needs at least one index");
  first_.push_back(0);
  const ShardSignature first = ShardSignature::of(*shards_[0]);
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    const Index& ix = *shards_[s];
    if (const std::string why = shard_disagreement(first, ShardSignature::of(ix)); !why.empty())
      throw Error(why);
    first_.push_back(first_.back() + ix.n_docs());
    // Words only matter between shards: one index answers for its own (Index::find_word).
    if (shards_.size() == 1) break;
    const std::size_t m = ix.dim();
    for (std::size_t u = 0; u < ix.vocab_size(); ++u) {
      const auto [it, fresh] =
          words_.try_emplace(std::string(ix.word(u)),
                             Where{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(u)});
      if (fresh) continue;
      const Index& other = *shards_[it->second.shard];
      const std::uint32_t w = it->second.word;
      if (std::memcmp(ix.vector(u), other.vector(w), m * sizeof(float)) != 0)
        throw Error(ix.source() + ": the word '" + std::string(ix.word(u)) +
                    "' has another vector than in " + other.source() +
                    ": built from other embeddings, not shards of one collection");
      if (ix.weighting() == Weighting::tfidf && ix.doc_freq(u) != other.doc_freq(w))
        throw Error(ix.source() + ": the word '" + std::string(ix.word(u)) + "' is in " +
                    std::to_string(ix.doc_freq(u)) + " documents there, in " +
                    std::to_string(other.doc_freq(w)) + " in " + other.source() +
                    ": TF-IDF indexes built apart weigh words by their own documents; build "
                    "them as one build's shards (lcrwmd build --shards N)");
    }
  }
}

std::pair<std::size_t, std::size_t> ShardSet::locate(std::size_t doc) const {
  if (doc >= n_docs())
    throw Error("document " + std::to_string(doc) + " of a collection of " +
                std::to_string(n_docs()));
  const auto s = static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), doc) -
                                          first_.begin()) -
                 1;
  return {s, doc - first_[s]};
}

std::string_view ShardSet::doc_id(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return shards_[s]->doc_id(i);
}

std::string_view ShardSet::label(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return shards_[s]->label(i);
}

std::string ShardSet::text(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return shards_[s]->text(i);
}

bool ShardSet::has_text() const {
  return std::all_of(shards_.begin(), shards_.end(), [](const Index* s) { return s->has_text(); });
}

std::optional<std::size_t> ShardSet::find_doc(std::string_view id) const {
  for (std::size_t s = 0; s < size(); ++s)
    if (const auto i = shards_[s]->find_doc(id)) return first_[s] + *i;
  return std::nullopt;
}

QuerySet ShardSet::make_query_set(const std::vector<RawDocument>& docs, const QueryOptions& options,
                                  TextReport* report) const {
  const Index& first = *shards_.front();
  const FindExtraWord other_shards = [this](std::string_view t) -> std::optional<ExtraWord> {
    const auto it = words_.find(t);
    if (it == words_.end()) return std::nullopt;
    const Index& holder = *shards_[it->second.shard];
    return ExtraWord{holder.vector(it->second.word), holder.doc_freq(it->second.word)};
  };
  // IDF and BM25 over shards built apart (each counting its own documents): the sums of their
  // counts. One build's shards each hold the whole build's, which the first answers for.
  const bool apart = size() > 1 && std::all_of(shards_.begin(), shards_.end(), [](const Index* s) {
                       return s->idf_docs() == s->n_docs();
                     });
  if (!apart)
    return make_query_set_with(first, docs, first.idf_docs(), other_shards, options, report,
                               term_statistics(first));
  const auto summed = [this](std::string_view word) {
    std::size_t df = 0;
    for (const Index* s : shards_)
      if (const auto u = s->find_word(word)) df += s->doc_freq(*u);
    return df;
  };
  std::optional<TermStatistics> terms;
  if (std::all_of(shards_.begin(), shards_.end(), [](const Index* s) { return s->has_terms(); })) {
    terms = TermStatistics{[this](std::string_view t) {
                             std::size_t df = 0;
                             for (const Index* s : shards_)
                               if (const auto u = s->find_term(t)) df += s->term_doc_freq(*u);
                             return df;
                           },
                           n_docs(), 0.0};
    for (const Index* s : shards_) terms->length += s->idf_length();
  }
  if (options.weights == QueryWeights::idf)
    return make_query_set_with(first, docs, n_docs(), other_shards, options, report, terms, summed);
  return make_query_set_with(first, docs, first.idf_docs(), other_shards, options, report, terms);
}

QuerySet ShardSet::documents_as_queries(std::span<const std::size_t> docs, bool with_terms) const {
  std::vector<QuerySet> parts;
  for (const std::size_t doc : docs) {
    const auto [s, i] = locate(doc);
    const std::size_t one[] = {i};
    QuerySet q = query_set_from_index(*shards_[s], one, with_terms);
    parts.push_back(s == 0 ? std::move(q) : translate_queries(*shards_[s], q, *shards_.front()));
  }
  std::vector<const QuerySet*> all;
  for (const QuerySet& q : parts) all.push_back(&q);
  return concat(*shards_.front(), all);
}

QuerySet ShardSet::for_shard(const QuerySet& q, std::size_t s) const {
  return s == 0 ? q : translate_queries(*shards_.front(), q, *shards_[s]);
}

}  // namespace lcrwmd
