// merge_documents (lcrwmd/index.h): a collection's compaction, as one build of its documents.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/posting_reader.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/string_map.h"
#include "util/parallel_errors.h"

namespace lcrwmd {

IndexData merge_documents(std::span<const Index* const> parts,
                          std::span<const std::vector<std::size_t>> docs) {
  if (parts.empty() || parts.size() != docs.size())
    throw Error("merge_documents: one list of documents per index");
  const Index& first = *parts.front();
  IndexData d;
  d.dim = first.dim();
  d.weighting = first.weighting();
  d.stopwords = first.stopwords().sorted();
  d.tokenizer_version = first.tokenizer_version();
  d.unit_vectors = first.unit_vectors();
  d.metric = first.shared_metric();
  const auto metric_of = [](const Index& ix) {
    return ix.metric() ? ix.metric()->fingerprint() : 0;
  };
  const bool texts =
      std::all_of(parts.begin(), parts.end(), [](const Index* p) { return p->has_text(); });
  // The words the selected documents use, in vocabulary_before's order (a build's rule),
  // each with its vector from the first part that has it; every part that holds a word must
  // hold the same vector, or the parts were built from other vectors.
  constexpr std::uint32_t kUnused = ~0u;
  StringMap<std::uint32_t> vocab_ids;  // word -> its place in `words_seen` (first seen)
  std::vector<std::pair<std::string_view, const float*>> words_seen;
  std::vector<std::uint32_t> seen_df;  // the selected documents using each word of words_seen
  std::vector<std::vector<std::uint32_t>> place(parts.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const Index& ix = *parts[p];
    if (ix.weighting() != Weighting::tf)
      throw Error(ix.source() +
                  ": TF-IDF documents cannot be merged: their weights depend on "
                  "the other documents");
    if (ix.dim() != d.dim || ix.tokenizer_version() != d.tokenizer_version ||
        ix.unit_vectors() != first.unit_vectors() || !(ix.stopwords() == first.stopwords()) ||
        metric_of(ix) != metric_of(first))
      throw Error(ix.source() + ": built otherwise than " + first.source());
    for (std::size_t r = 0; r < docs[p].size(); ++r)
      if (docs[p][r] >= ix.n_docs() || (r > 0 && docs[p][r] <= docs[p][r - 1]))
        throw Error("merge_documents: documents out of range or order in " + ix.source());
    place[p].assign(ix.vocab_size(), kUnused);
    for (const std::size_t i : docs[p])
      for (const std::uint32_t u : ix.doc_words(i)) {
        if (place[p][u] == kUnused) {
          const auto [it, fresh] = vocab_ids.try_emplace(
              std::string(ix.word(u)), static_cast<std::uint32_t>(words_seen.size()));
          if (fresh) {
            words_seen.emplace_back(ix.word(u), ix.vector(u));
            seen_df.push_back(0);
          } else if (std::memcmp(words_seen[it->second].second, ix.vector(u),
                                 d.dim * sizeof(float)) != 0) {
            throw Error(ix.source() + ": the word '" + std::string(ix.word(u)) +
                        "' has another vector than in " + first.source() +
                        ": the parts were built from other word vectors");
          }
          place[p][u] = it->second;
        }
        ++seen_df[place[p][u]];
      }
  }
  std::vector<std::uint32_t> by_word(words_seen.size()), compact(words_seen.size());
  std::iota(by_word.begin(), by_word.end(), 0u);
  std::sort(by_word.begin(), by_word.end(), [&](std::uint32_t a, std::uint32_t b) {
    return vocabulary_before(seen_df[a], words_seen[a].first, seen_df[b], words_seen[b].first);
  });
  d.vectors.reserve(by_word.size() * d.dim);
  for (const std::uint32_t w : by_word) {
    compact[w] = static_cast<std::uint32_t>(d.vocab.size());
    d.vocab.emplace_back(words_seen[w].first);
    d.vectors.insert(d.vectors.end(), words_seen[w].second, words_seen[w].second + d.dim);
    d.doc_freq.push_back(seen_df[w]);
  }
  // Documents, their terms gathered from the postings.
  StringMap<std::uint32_t> term_ids;
  std::vector<std::string> terms;
  std::vector<std::uint64_t> term_indptr{0};
  std::vector<std::uint32_t> doc_terms, term_counts;
  std::vector<std::pair<std::uint32_t, float>> words;
  std::vector<std::pair<const Index*, std::size_t>> text_of;  // each kept document's text
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const Index& ix = *parts[p];
    // Part p's selected documents' terms: (row among them, term id, count), by term then row.
    std::vector<std::uint32_t> row(ix.n_docs(), kUnused);
    for (std::size_t r = 0; r < docs[p].size(); ++r)
      row[docs[p][r]] = static_cast<std::uint32_t>(r);
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> doc_term(docs[p].size());
    for (std::size_t t = 0; t < ix.n_terms(); ++t) {
      PostingReader post(ix.postings(t));
      std::uint32_t id = kUnused;
      for (std::size_t q = 0; q < post.size(); ++q) {
        const std::uint32_t r = row[post.doc(q) - post.first()];
        if (r == kUnused) continue;
        if (id == kUnused) {
          const auto [it, fresh] = term_ids.try_emplace(std::string(ix.term(t)),
                                                        static_cast<std::uint32_t>(terms.size()));
          if (fresh) terms.emplace_back(ix.term(t));
          id = it->second;
        }
        doc_term[r].emplace_back(id, post.count(q));
      }
    }
    for (std::size_t r = 0; r < docs[p].size(); ++r) {
      const std::size_t i = docs[p][r];
      const std::span<const std::uint32_t> w = ix.doc_words(i);
      const float* v = ix.values().data() + ix.indptr()[i];
      words.clear();
      for (std::size_t q = 0; q < w.size(); ++q) words.emplace_back(compact[place[p][w[q]]], v[q]);
      std::sort(words.begin(), words.end());
      for (const auto& [u, value] : words) {
        d.indices.push_back(u);
        d.values.push_back(value);
      }
      d.indptr.push_back(d.indices.size());
      for (const auto& [t, count] : doc_term[r]) {
        doc_terms.push_back(t);
        term_counts.push_back(count);
      }
      term_indptr.push_back(doc_terms.size());
      d.ids.emplace_back(ix.doc_id(i));
      d.labels.emplace_back(ix.label(i));
      if (texts) text_of.emplace_back(&ix, i);
    }
  }
  // The texts inflated in parallel (a large merge's longest step after deflating them again).
  d.texts.resize(text_of.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t r = 0; r < text_of.size(); ++r)
    errors.run([&] { d.texts[r] = text_of[r].first->text(text_of[r].second); });
  errors.rethrow();
  if (first.has_terms()) set_terms(d, std::move(terms), term_indptr, doc_terms, term_counts);
  return d;
}

}  // namespace lcrwmd
