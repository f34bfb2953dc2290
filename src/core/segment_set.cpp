// A collection of segments (lcrwmd/segments.h): their agreement checked once, documents found by
// their place in the collection, queries read over every segment's words.
#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>

#include "core/query_words.h"
#include "core/shard_signature.h"
#include "lcrwmd/error.h"
#include "lcrwmd/segments.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

// Every term of the segments but the one with the most: for each, the first of its places in a
// list threaded through `places` (each place a segment and its id there).
struct SegmentSet::TermTable {
  struct Place {
    std::uint32_t segment, term, next;
  };
  std::once_flag once;
  StringMap<std::uint32_t> first;
  std::vector<Place> places;
};

SegmentSet::SegmentSet(std::vector<const Index*> segments)
    : SegmentSet(segments, std::vector<std::span<const std::uint32_t>>(segments.size())) {}

SegmentSet::SegmentSet(std::vector<const Index*> segments,
                       std::vector<std::span<const std::uint32_t>> deleted) {
  if (segments.empty()) throw Error("a collection needs at least one index");
  if (deleted.size() != segments.size())
    throw Error("a collection's deletions: one list per segment");
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const Index& ix = *segments[s];
    if (!ascending_below(deleted[s], ix.n_docs()))
      throw Error(ix.source() + ": its deleted documents are out of order or range");
    parts_.push_back({&ix, deleted[s], n_docs_});
    n_docs_ += ix.n_docs() - deleted[s].size();
    deletions_ = deletions_ || !deleted[s].empty();
  }
  index_words();
  // What the deleted documents count for, taken off the segments' document frequencies.
  for (const Part& part : parts_) {
    const Index& ix = *part.index;
    const std::span<const std::uint32_t> del = part.deleted;
    if (del.empty()) continue;
    if (ix.idf_docs() != ix.n_docs())
      throw Error(ix.source() + ": a segment of a larger build cannot have deleted documents");
    for (const std::uint32_t i : del)
      for (const std::uint32_t u : ix.doc_words(i)) ++deleted_words_[std::string(ix.word(u))];
    if (!ix.has_terms()) continue;
    for (const std::uint32_t i : del) deleted_tokens_ += ix.doc_length(i);
    for (std::size_t t = 0; t < ix.n_terms(); ++t) {
      const Index::Postings p = ix.postings(t);
      std::uint32_t n = 0;
      for (std::size_t q = 0; q < p.size; ++q)
        n += std::binary_search(del.begin(), del.end(), p.docs[q] - p.first) ? 1 : 0;
      if (n > 0) deleted_terms_[std::string(ix.term(t))] += n;
    }
  }
}

void SegmentSet::index_words() {
  terms_ = std::make_shared<TermTable>();
  for (std::size_t s = 1; s < parts_.size(); ++s)
    if (parts_[s].index->n_terms() > parts_[most_terms_].index->n_terms()) most_terms_ = s;
  const ShardSignature first = ShardSignature::of(*parts_[0].index);
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    const Index& ix = *parts_[s].index;
    if (const std::string why = shard_disagreement(first, ShardSignature::of(ix)); !why.empty())
      throw Error(why);
    // Words only matter between segments: one index answers for its own (Index::find_word).
    if (parts_.size() == 1) break;
    const std::size_t m = ix.dim();
    for (std::size_t u = 0; u < ix.vocab_size(); ++u) {
      const auto [it, fresh] =
          words_.try_emplace(std::string(ix.word(u)),
                             Where{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(u)});
      if (fresh) continue;
      const Index& other = *parts_[it->second.segment].index;
      const std::uint32_t w = it->second.word;
      if (std::memcmp(ix.vector(u), other.vector(w), m * sizeof(float)) != 0)
        throw Error(ix.source() + ": the word '" + std::string(ix.word(u)) +
                    "' has another vector than in " + other.source() +
                    ": built from other embeddings, not segments of one collection");
      if (ix.weighting() == Weighting::tfidf && ix.doc_freq(u) != other.doc_freq(w))
        throw Error(ix.source() + ": the word '" + std::string(ix.word(u)) + "' is in " +
                    std::to_string(ix.doc_freq(u)) + " documents there, in " +
                    std::to_string(other.doc_freq(w)) + " in " + other.source() +
                    ": TF-IDF indexes built apart weigh words by their own documents; build "
                    "them as one build's segments (lcrwmd build --shards N)");
    }
  }
}

std::pair<std::size_t, std::size_t> SegmentSet::locate(std::size_t doc) const {
  if (doc >= n_docs())
    throw Error("document " + std::to_string(doc) + " of a collection of " +
                std::to_string(n_docs()));
  const auto s = static_cast<std::size_t>(std::ranges::upper_bound(parts_, doc, {}, &Part::first) -
                                          parts_.begin()) -
                 1;
  // The r-th live document is r + p, p the deleted ones before it: the first p with
  // del[p] - p > r (del[p] - p never decreases).
  const std::size_t r = doc - parts_[s].first;
  const std::span<const std::uint32_t> del = deleted(s);
  std::size_t lo = 0, hi = del.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (del[mid] - mid <= r)
      lo = mid + 1;
    else
      hi = mid;
  }
  return {s, r + lo};
}

std::size_t SegmentSet::collection_doc(std::size_t s, std::size_t i) const {
  const std::span<const std::uint32_t> del = deleted(s);
  return parts_[s].first + i -
         static_cast<std::size_t>(std::lower_bound(del.begin(), del.end(), i) - del.begin());
}

std::string_view SegmentSet::doc_id(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return parts_[s].index->doc_id(i);
}

std::string_view SegmentSet::label(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return parts_[s].index->label(i);
}

std::string SegmentSet::text(std::size_t doc) const {
  const auto [s, i] = locate(doc);
  return parts_[s].index->text(i);
}

bool SegmentSet::has_text() const {
  return std::all_of(parts_.begin(), parts_.end(),
                     [](const Part& p) { return p.index->has_text(); });
}

std::optional<std::size_t> SegmentSet::find_doc(std::string_view id) const {
  for (std::size_t s = 0; s < size(); ++s)
    if (const auto i = parts_[s].index->find_doc(id)) {
      const std::span<const std::uint32_t> del = deleted(s);
      // A segment's ids are distinct: a deleted one has its live version, if any, later.
      if (!std::binary_search(del.begin(), del.end(), static_cast<std::uint32_t>(*i)))
        return collection_doc(s, *i);
    }
  return std::nullopt;
}

std::optional<SegmentSet::WordPlace> SegmentSet::find_word(std::string_view word) const {
  if (size() == 1) {
    if (const auto u = parts_.front().index->find_word(word)) return WordPlace{0, *u};
    return std::nullopt;
  }
  const auto it = words_.find(word);
  if (it == words_.end()) return std::nullopt;
  return WordPlace{it->second.segment, it->second.word};
}

QuerySet SegmentSet::make_query_set(const std::vector<RawDocument>& docs,
                                    const QueryOptions& options, TextReport* report) const {
  const Index& first = *parts_.front().index;
  const FindExtraWord other_segments = [this](std::string_view t) -> std::optional<ExtraWord> {
    if (size() == 1) return std::nullopt;  // the first index has its own
    const auto at = find_word(t);
    if (!at) return std::nullopt;
    const Index& holder = *parts_[at->segment].index;
    return ExtraWord{holder.vector(at->word), holder.doc_freq(at->word)};
  };
  return make_query_set_with(first, docs, other_segments, options, report, statistics());
}

bool SegmentSet::built_apart() const {
  return (size() > 1 || has_deletions()) &&
         std::all_of(parts_.begin(), parts_.end(),
                     [](const Part& p) { return p.index->idf_docs() == p.index->n_docs(); });
}

CollectionStatistics SegmentSet::statistics() const {
  // One build's segments each hold the whole build's, which the first answers for.
  if (!built_apart()) return statistics_of(*parts_.front().index);
  // Segments built apart each count their own documents: the sums, less the deleted documents'.
  const auto less_deleted = [](const StringMap<std::uint32_t>& deleted, std::string_view key) {
    const auto it = deleted.find(key);
    return it == deleted.end() ? std::size_t{0} : std::size_t{it->second};
  };
  CollectionStatistics s{.docs = n_docs()};
  s.word_docs = [this, less_deleted](std::string_view word) {
    std::size_t df = 0;
    for (const Part& p : parts_)
      if (const auto u = p.index->find_word(word)) df += p.index->doc_freq(*u);
    return df - less_deleted(deleted_words_, word);
  };
  if (std::all_of(parts_.begin(), parts_.end(),
                  [](const Part& p) { return p.index->has_terms(); })) {
    s.term_docs = [this, less_deleted](std::string_view t) {
      std::size_t df = 0;
      for (const Part& p : parts_)
        if (const auto u = p.index->find_term(t)) df += p.index->term_doc_freq(*u);
      return df - less_deleted(deleted_terms_, t);
    };
    std::uint64_t tokens = 0;
    for (const Part& p : parts_) tokens += static_cast<std::uint64_t>(p.index->idf_length());
    s.tokens = static_cast<double>(tokens - deleted_tokens_);
  }
  return s;
}

QuerySet SegmentSet::documents_as_queries(std::span<const std::size_t> docs,
                                          bool with_terms) const {
  std::vector<QuerySet> parts;
  for (const std::size_t doc : docs) {
    const auto [s, i] = locate(doc);
    const std::size_t one[] = {i};
    QuerySet q = query_set_from_index(*parts_[s].index, one, with_terms);
    parts.push_back(s == 0 ? std::move(q)
                           : translate_queries(*parts_[s].index, q, *parts_.front().index));
  }
  std::vector<const QuerySet*> all;
  for (const QuerySet& q : parts) all.push_back(&q);
  return concat(*parts_.front().index, all);
}

void SegmentSet::find_term(std::string_view term, std::span<std::uint32_t> ids) const {
  std::fill(ids.begin(), ids.end(), kNoTerm);
  if (const auto t = parts_[most_terms_].index->find_term(term)) ids[most_terms_] = *t;
  if (size() == 1) return;
  TermTable& table = *terms_;
  std::call_once(table.once, [&] {
    for (std::size_t s = 0; s < size(); ++s) {
      if (s == most_terms_) continue;
      const Index& ix = *parts_[s].index;
      for (std::size_t t = 0; t < ix.n_terms(); ++t) {
        const auto at = static_cast<std::uint32_t>(table.places.size());
        const auto [it, fresh] = table.first.try_emplace(std::string(ix.term(t)), at);
        table.places.push_back({static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(t),
                                fresh ? kNoTerm : it->second});
        it->second = at;
      }
    }
  });
  const auto it = table.first.find(term);
  if (it == table.first.end()) return;
  for (std::uint32_t p = it->second; p != kNoTerm; p = table.places[p].next)
    ids[table.places[p].segment] = table.places[p].term;
}

QuerySet SegmentSet::for_segment(const QuerySet& q, std::size_t s) const {
  if (portable_) return from_portable(q, *parts_[s].index);
  return s == 0 ? q : translate_queries(*parts_.front().index, q, *parts_[s].index);
}

SegmentSet SegmentSet::reading_portable_queries() const {
  SegmentSet out = *this;
  out.portable_ = true;
  return out;
}

}  // namespace lcrwmd
