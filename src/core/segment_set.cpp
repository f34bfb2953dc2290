// A collection of segments (lcrwmd/segments.h): their agreement checked once, documents found by
// their place in the collection, queries read over every segment's words.
#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>

#include "core/posting_reader.h"
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

// The distinct words of the segments, counted on first use (a table of every segment's words).
struct SegmentSet::WordCount {
  std::once_flag once;
  std::size_t distinct = 0;
};

namespace {

// Of a term's postings in a segment, the documents in `del` (the segment's deleted ones,
// ascending): each of the shorter list looked up in the longer.
std::size_t deleted_in(const Index::Postings& postings, std::span<const std::uint32_t> del) {
  PostingReader p(postings);
  std::size_t n = 0;
  if (del.size() < p.size()) {
    for (std::size_t e = 0; const std::uint32_t d : del) n += p.holds(e, d + p.first());
  } else {
    for (std::size_t q = 0; q < p.size(); ++q)
      n += std::binary_search(del.begin(), del.end(), p.doc(q) - p.first());
  }
  return n;
}

}  // namespace

SegmentSet::SegmentSet(std::vector<const Index*> segments)
    : SegmentSet(segments, std::vector<std::span<const std::uint32_t>>(segments.size())) {}

SegmentSet::SegmentSet(std::vector<const Index*> segments,
                       std::vector<std::span<const std::uint32_t>> deleted,
                       const SegmentSet* earlier) {
  if (segments.empty()) throw Error("a collection needs at least one index");
  if (deleted.size() != segments.size())
    throw Error("a collection's deletions: one list per segment");
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const Index& ix = *segments[s];
    if (!ascending_below(deleted[s], ix.n_docs()))
      throw Error(ix.source() + ": its deleted documents are out of order or range");
    if (!deleted[s].empty() && ix.idf_docs() != ix.n_docs())
      throw Error(ix.source() + ": a segment of a larger build cannot have deleted documents");
    parts_.push_back({&ix, deleted[s], n_docs_});
    n_docs_ += ix.n_docs() - deleted[s].size();
    deletions_ = deletions_ || !deleted[s].empty();
    if (ix.has_terms())
      for (const std::uint32_t i : deleted[s]) deleted_tokens_ += ix.doc_length(i);
  }
  check_agreement(earlier);
  terms_ = std::make_shared<TermTable>();
  words_ = std::make_shared<WordCount>();
  for (std::size_t s = 1; s < parts_.size(); ++s)
    if (parts_[s].index->n_terms() > parts_[most_terms_].index->n_terms()) most_terms_ = s;
}

void SegmentSet::check_agreement(const SegmentSet* earlier) const {
  const auto known = [&](const Index* ix) {
    return earlier != nullptr && std::any_of(earlier->parts_.begin(), earlier->parts_.end(),
                                             [&](const Part& p) { return p.index == ix; });
  };
  std::vector<char> fresh(parts_.size());
  for (std::size_t s = 0; s < parts_.size(); ++s) fresh[s] = !known(parts_[s].index);
  const ShardSignature first = ShardSignature::of(*parts_[0].index);
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    const Index& ix = *parts_[s].index;
    if (!fresh[s]) continue;  // `earlier` checked it against the segments both hold
    if (const std::string why = shard_disagreement(first, ShardSignature::of(ix)); !why.empty())
      throw Error(why);
    // Its words against every segment it was not checked against yet: those before it, and
    // those `earlier` held (a merge's segment may come before them).
    const std::size_t m = ix.dim();
    for (std::size_t t = 0; t < parts_.size(); ++t) {
      if (t == s || (fresh[t] && t > s)) continue;
      const Index& other = *parts_[t].index;
      for (std::size_t u = 0; u < ix.vocab_size(); ++u) {
        const std::optional<std::uint32_t> w = other.find_word(ix.word(u));
        if (!w) continue;
        const Index& a = t < s ? ix : other;  // named as the later of the two
        const Index& b = t < s ? other : ix;
        if (std::memcmp(ix.vector(u), other.vector(*w), m * sizeof(float)) != 0)
          throw Error(a.source() + ": the word '" + std::string(ix.word(u)) +
                      "' has another vector than in " + b.source() +
                      ": built from other embeddings, not segments of one collection");
        if (ix.weighting() == Weighting::tfidf && ix.doc_freq(u) != other.doc_freq(*w))
          throw Error(a.source() + ": the word '" + std::string(ix.word(u)) + "' is in " +
                      std::to_string(t < s ? ix.doc_freq(u) : other.doc_freq(*w)) +
                      " documents there, in " +
                      std::to_string(t < s ? other.doc_freq(*w) : ix.doc_freq(u)) + " in " +
                      b.source() +
                      ": TF-IDF indexes built apart weigh words by their own documents; build "
                      "them as one build's segments (lcrwmd build --shards N)");
      }
    }
  }
}

std::size_t SegmentSet::vocab_size() const {
  if (size() == 1) return parts_.front().index->vocab_size();
  std::call_once(words_->once, [&] {
    WordSet words;
    for (const Part& p : parts_)
      for (std::size_t u = 0; u < p.index->vocab_size(); ++u) words.emplace(p.index->word(u));
    words_->distinct = words.size();
  });
  return words_->distinct;
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
  for (std::size_t s = 0; s < size(); ++s)
    if (const auto u = parts_[s].index->find_word(word)) return WordPlace{s, *u};
  return std::nullopt;
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
  // Segments built apart each count their own documents: the sums, less the deleted documents',
  // counted as a query asks for a term (its postings against the deleted), so that a snapshot
  // costs nothing per term it holds. A word is the term of its string (a document holds the word
  // where it holds the term: a word is a term with a vector); a segment without terms (an older
  // format) counts its deleted documents' words.
  CollectionStatistics s{.docs = n_docs()};
  s.word_docs = [this](std::string_view word) {
    std::size_t df = 0;
    for (const Part& p : parts_) {
      const auto u = p.index->find_word(word);
      if (!u) continue;
      df += p.index->doc_freq(*u);
      if (p.deleted.empty()) continue;
      if (p.index->has_terms()) {
        if (const auto t = p.index->find_term(word))
          df -= deleted_in(p.index->postings(*t), p.deleted);
      } else {
        for (const std::uint32_t i : p.deleted) {
          const std::span<const std::uint32_t> words = p.index->doc_words(i);
          df -= std::find(words.begin(), words.end(), *u) != words.end();
        }
      }
    }
    return df;
  };
  if (std::all_of(parts_.begin(), parts_.end(),
                  [](const Part& p) { return p.index->has_terms(); })) {
    s.term_docs = [this](std::string_view t) {
      std::size_t df = 0;
      for (const Part& p : parts_)
        if (const auto u = p.index->find_term(t))
          df += p.index->term_doc_freq(*u) - deleted_in(p.index->postings(*u), p.deleted);
      return df;
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
