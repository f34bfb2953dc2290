#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/bag_of_words.h"
#include "core/posting_reader.h"
#include "core/query_words.h"
#include "lcrwmd/error.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

void check_query_embeddings_dim(const Index& index, const WordVectors* emb) {
  if (emb != nullptr && emb->dim() != index.input_dim())
    throw Error(emb->source() + ": embeddings have dimension " + std::to_string(emb->dim()) +
                ", the index was built from " + std::to_string(index.input_dim()));
}

QuerySet make_query_set_with(const Index& index, const std::vector<RawDocument>& docs,
                             const FindExtraWord& elsewhere, const QueryOptions& options,
                             TextReport* report_out, const CollectionStatistics& stats) {
  const WordVectors* emb = options.embeddings;
  const Weighting weighting =
      options.weights == QueryWeights::idf ? Weighting::tfidf : index.weighting();
  check_query_embeddings_dim(index, emb);
  std::vector<float> looked_up(index.dim());
  const auto find = [&](std::string_view t) -> std::optional<ExtraWord> {
    if (elsewhere)
      if (std::optional<ExtraWord> e = elsewhere(t)) return e;
    if (emb == nullptr || !query_word_lookup(index, *emb, t, looked_up.data())) return std::nullopt;
    return ExtraWord{looked_up.data(), 0};
  };
  QuerySet qs;
  TextReport report;
  std::unordered_set<std::string> unknown;
  StringMap<std::uint32_t> extra;
  std::vector<std::size_t> extra_doc_freq;
  const std::size_t v = index.vocab_size(), m = index.dim();

  auto lookup = [&](std::string_view t) -> std::optional<std::uint32_t> {
    if (auto u = index.find_word(t)) return u;
    if (auto it = extra.find(t); it != extra.end()) return it->second;
    const std::optional<ExtraWord> e = find(t);
    if (!e) return std::nullopt;
    const auto id = static_cast<std::uint32_t>(v + qs.extra_words.size());
    extra.emplace(std::string(t), id);
    qs.extra_words.emplace_back(t);
    qs.extra_vectors.insert(qs.extra_vectors.end(), e->vector, e->vector + m);
    extra_doc_freq.push_back(e->doc_freq);
    return id;
  };
  // IDF query weights over segments built apart: their sums; otherwise the index's own counts
  // (a shard of one build: the build's).
  const bool summed = options.weights == QueryWeights::idf && stats.word_docs;
  const std::size_t idf_docs = summed ? stats.docs : index.idf_docs();
  auto idf_of = [&](std::uint32_t u) {
    if (summed)
      return idf(idf_docs, stats.word_docs(u < v ? index.word(u) : qs.extra_words[u - v]));
    return idf(idf_docs, u < v ? index.doc_freq(u) : extra_doc_freq[u - v]);
  };
  const Metric* metric = index.metric();
  auto weight_of = [&](std::uint32_t u) -> double {
    if (metric == nullptr) return 1.0;
    return metric->weight(u < v ? index.word(u) : std::string_view(qs.extra_words[u - v]));
  };
  const bool terms = index.has_terms();
  const bool term_stats = terms && stats.term_docs;
  if (term_stats) qs.terms.mean_length = stats.tokens / static_cast<double>(stats.docs);
  std::vector<std::string> tokens;
  for (const RawDocument& doc : docs) {
    ++report.documents_read;
    tokens.clear();
    std::vector<WordCount> counts = count_words(doc, &index.stopwords(), lookup, report, unknown,
                                                index.tokenizer_version(), &tokens);
    if (counts.empty() && !(options.keep_term_only && terms && !tokens.empty())) {
      report.empty_documents.push_back(doc.id);
      continue;
    }
    if (terms) {
      for (auto& [term, count] : count_terms(std::move(tokens))) {
        if (term_stats)
          qs.terms.idf.push_back(static_cast<float>(bm25_idf(stats.docs, stats.term_docs(term))));
        qs.terms.terms.push_back(std::move(term));
        qs.terms.counts.push_back(count);
      }
      qs.terms.indptr.push_back(qs.terms.terms.size());
      tokens = {};
    }
    for (const WordCount& wc : counts) qs.words.push_back(wc.word);
    append_weights(counts, weighting, idf_of, weight_of, qs.weights);
    qs.indptr.push_back(qs.words.size());
    qs.ids.push_back(doc.id);
    qs.labels.push_back(doc.label);
  }
  report.documents_kept = qs.size();
  if (emb == nullptr) {  // dropped for want of embeddings to look them up in, not for good
    report.not_in_index_tokens = std::exchange(report.unknown_tokens, 0);
    report.not_in_index_distinct = std::exchange(report.unknown_distinct, 0);
  }
  if (report_out) *report_out = report;
  return qs;
}

CollectionStatistics statistics_of(const Index& index) {
  CollectionStatistics s{.docs = index.idf_docs(), .tokens = index.idf_length()};
  if (index.has_terms())
    s.term_docs = [&index](std::string_view t) -> std::size_t {
      const auto id = index.find_term(t);
      return id ? index.term_doc_freq(*id) : 0;
    };
  return s;
}

QuerySet make_query_set(const Index& index, const std::vector<RawDocument>& docs,
                        const QueryOptions& options, TextReport* report) {
  return make_query_set_with(index, docs, {}, options, report, statistics_of(index));
}

QueryWeights parse_query_weights(std::string_view s, Direction direction) {
  if (s == "index") return QueryWeights::index;
  if (s == "idf") return QueryWeights::idf;
  if (s == "auto")
    return direction == Direction::query_to_document ? QueryWeights::idf : QueryWeights::index;
  throw Error("unknown query weights '" + std::string(s) + "' (expected auto, index or idf)");
}

void check_stopwords(const Index& index, const StopWords& given, const std::string& given_name) {
  if (given == index.stopwords()) return;
  throw Error(given_name + ": " + std::to_string(given.size()) +
              " stop words, not the index's own (" + std::to_string(index.stopwords().size()) +
              ", recorded by `lcrwmd build`; `lcrwmd info` lists them): queries are read with "
              "the index's, so leave these out");
}

std::unique_ptr<WordVectors> load_query_embeddings(const Index& index, const std::string& path,
                                                   const WordSet* query_words) {
  WordSet wanted;
  if (query_words != nullptr) {
    wanted = *query_words;
    for (std::size_t u = 0; u < index.vocab_size(); ++u) wanted.emplace(index.word(u));
  }
  std::unique_ptr<WordVectors> source =
      open_word_vectors(path, query_words != nullptr ? &wanted : nullptr);
  check_embeddings(index, *source);
  return source;
}

bool query_word_lookup(const Index& index, const WordVectors& source, std::string_view word,
                       float* out) {
  const Metric* metric = index.metric();
  if (metric == nullptr) {
    if (!source.lookup(word, out)) return false;
    if (index.unit_vectors()) to_unit_length(out, index.dim());
    return true;
  }
  thread_local std::vector<float> in;
  in.resize(metric->in_dim());
  if (!source.lookup(word, in.data())) return false;
  if (index.unit_vectors()) to_unit_length(in.data(), in.size());
  metric->apply(in.data(), out);
  return true;
}

void check_embeddings(const Index& index, const WordVectors& embeddings) {
  const std::string both = embeddings.source() + " against the index " + index.source();
  if (embeddings.dim() != index.input_dim())
    throw Error(both + ": dimension " + std::to_string(embeddings.dim()) +
                ", the index was built from " + std::to_string(index.input_dim()));
  std::vector<float> v(index.dim());
  for (std::size_t u = 0; u < index.vocab_size(); ++u) {
    const bool found = query_word_lookup(index, embeddings, index.word(u), v.data());
    if (found && std::memcmp(v.data(), index.vector(u), index.dim() * sizeof(float)) == 0) continue;
    throw Error(both + ": not the embeddings the index was built from (its word '" +
                std::string(index.word(u)) + "' " + (found ? "has another vector" : "is missing") +
                " there" + (index.unit_vectors() ? ", scaled to length 1" : "") +
                (index.metric() ? ", mapped by its metric" : "") + ")");
  }
}

namespace {

QueryTerms subset(const QueryTerms& t, std::size_t begin, std::size_t end) {
  QueryTerms s;
  s.mean_length = t.mean_length;
  if (t.indptr.size() <= end) return s;  // none kept
  const auto first = static_cast<std::ptrdiff_t>(t.indptr[begin]);
  const auto last = static_cast<std::ptrdiff_t>(t.indptr[end]);
  s.terms.assign(t.terms.begin() + first, t.terms.begin() + last);
  s.counts.assign(t.counts.begin() + first, t.counts.begin() + last);
  if (!t.idf.empty()) s.idf.assign(t.idf.begin() + first, t.idf.begin() + last);
  for (std::size_t j = begin; j < end; ++j) s.indptr.push_back(t.indptr[j + 1] - t.indptr[begin]);
  return s;
}

}  // namespace

QuerySet subset(const QuerySet& q, std::size_t begin, std::size_t end) {
  end = std::min(end, q.size());
  begin = std::min(begin, end);
  QuerySet s;
  s.extra_words = q.extra_words;
  s.extra_vectors = q.extra_vectors;
  s.ids.assign(q.ids.begin() + static_cast<std::ptrdiff_t>(begin),
               q.ids.begin() + static_cast<std::ptrdiff_t>(end));
  s.labels.assign(q.labels.begin() + static_cast<std::ptrdiff_t>(begin),
                  q.labels.begin() + static_cast<std::ptrdiff_t>(end));
  const auto first = static_cast<std::ptrdiff_t>(q.indptr[begin]);
  const auto last = static_cast<std::ptrdiff_t>(q.indptr[end]);
  s.words.assign(q.words.begin() + first, q.words.begin() + last);
  s.weights.assign(q.weights.begin() + first, q.weights.begin() + last);
  for (std::size_t j = begin; j < end; ++j) s.indptr.push_back(q.indptr[j + 1] - q.indptr[begin]);
  s.terms = subset(q.terms, begin, end);
  return s;
}

QuerySet concat(const Index& index, const std::vector<const QuerySet*>& parts) {
  QuerySet all;
  const std::size_t v = index.vocab_size();
  for (const QuerySet* q : parts) {
    const auto offset = static_cast<std::uint32_t>(all.extra_words.size());
    all.ids.insert(all.ids.end(), q->ids.begin(), q->ids.end());
    all.labels.insert(all.labels.end(), q->labels.begin(), q->labels.end());
    for (std::uint32_t u : q->words) all.words.push_back(u < v ? u : u + offset);
    all.weights.insert(all.weights.end(), q->weights.begin(), q->weights.end());
    const std::uint64_t base = all.indptr.back();
    for (std::size_t j = 1; j < q->indptr.size(); ++j) all.indptr.push_back(base + q->indptr[j]);
    all.extra_words.insert(all.extra_words.end(), q->extra_words.begin(), q->extra_words.end());
    all.extra_vectors.insert(all.extra_vectors.end(), q->extra_vectors.begin(),
                             q->extra_vectors.end());
    QueryTerms& t = all.terms;
    const std::uint64_t term_base = t.indptr.back();
    for (std::size_t j = 1; j < q->terms.indptr.size(); ++j)
      t.indptr.push_back(term_base + q->terms.indptr[j]);
    t.terms.insert(t.terms.end(), q->terms.terms.begin(), q->terms.terms.end());
    t.counts.insert(t.counts.end(), q->terms.counts.begin(), q->terms.counts.end());
    t.idf.insert(t.idf.end(), q->terms.idf.begin(), q->terms.idf.end());
    t.mean_length = q->terms.mean_length;
  }
  return all;
}

namespace {

// q's words over `to`'s vocabulary (none: every word an extra word), name_of(u) and vector_of(u)
// naming q's word u: the words `to` lacks become extra words, numbered in the order of q's ids
// (so in the same order for every query, and the same however often the queries travel).
template <typename Name, typename Vector>
QuerySet rewrite(const QuerySet& q, const Index* to, std::size_t m, Name&& name_of,
                 Vector&& vector_of) {
  const std::size_t vs = to ? to->vocab_size() : 0;
  QuerySet out;
  out.ids = q.ids;
  out.labels = q.labels;
  out.terms = q.terms;  // text: the same over any index
  std::vector<std::uint32_t> distinct(q.words);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::unordered_map<std::uint32_t, std::uint32_t> id;
  id.reserve(distinct.size());
  for (const std::uint32_t u : distinct) {
    const std::string_view word = name_of(u);
    if (const auto local = to ? to->find_word(word) : std::nullopt) {
      id[u] = *local;
      continue;
    }
    id[u] = static_cast<std::uint32_t>(vs + out.extra_words.size());
    out.extra_words.emplace_back(word);
    const float* vec = vector_of(u);
    out.extra_vectors.insert(out.extra_vectors.end(), vec, vec + m);
  }
  // Each query's words ascending in the new ids, their weights with them.
  std::vector<std::pair<std::uint32_t, float>> row;
  for (std::size_t j = 0; j < q.size(); ++j) {
    row.clear();
    for (std::uint64_t p = q.indptr[j]; p < q.indptr[j + 1]; ++p)
      row.emplace_back(id.at(q.words[p]), q.weights[p]);
    std::sort(row.begin(), row.end());
    for (const auto& [w, f] : row) {
      out.words.push_back(w);
      out.weights.push_back(f);
    }
    out.indptr.push_back(out.words.size());
  }
  return out;
}

// q's words named and placed as `from` (their index) holds them, rewritten over `to`.
QuerySet rewrite_from(const Index& from, const QuerySet& q, const Index* to) {
  check_query_words(from, q);
  const std::size_t v0 = from.vocab_size();
  return rewrite(
      q, to, from.dim(),
      [&](std::uint32_t u) {
        return u < v0 ? from.word(u) : std::string_view(q.extra_words[u - v0]);
      },
      [&](std::uint32_t u) { return query_word_vector(from, q, u); });
}

}  // namespace

void check_query_words(const Index& index, const QuerySet& q) {
  const std::size_t words = index.vocab_size() + q.extra_words.size();
  if (q.indptr.size() != q.size() + 1 || q.indptr.back() != q.words.size() ||
      q.weights.size() != q.words.size() ||
      q.extra_vectors.size() != q.extra_words.size() * index.dim())
    throw Error("queries: their arrays disagree in size (not a query set of this index)");
  for (const std::uint32_t u : q.words)
    if (u >= words)
      throw Error("queries: word " + std::to_string(u) + " is neither one of the " +
                  std::to_string(index.vocab_size()) + " words of " + index.source() +
                  " nor one of their " + std::to_string(q.extra_words.size()) +
                  " extra words: written over another index?");
}

QuerySet translate_queries(const Index& from, const QuerySet& q, const Index& to) {
  return rewrite_from(from, q, &to);
}

QuerySet portable_queries(const Index& from, const QuerySet& q) {
  return rewrite_from(from, q, nullptr);
}

QuerySet from_portable(const QuerySet& q, const Index& to) {
  const std::size_t m = to.dim();
  if (q.extra_vectors.size() != q.extra_words.size() * m)
    throw Error(
        "portable queries of dimension " +
        std::to_string(q.extra_words.empty() ? 0 : q.extra_vectors.size() / q.extra_words.size()) +
        " against an index of dimension " + std::to_string(m));
  for (const std::uint32_t u : q.words)
    if (u >= q.extra_words.size()) throw Error("portable queries: a word beyond their words");
  return rewrite(
      q, &to, m, [&](std::uint32_t u) { return std::string_view(q.extra_words[u]); },
      [&](std::uint32_t u) { return q.extra_vectors.data() + std::size_t{u} * m; });
}

namespace {

// Documents' terms as queries' (one pass over every posting), weighed by the index's statistics.
QueryTerms document_terms(const Index& index, std::span<const std::size_t> docs) {
  std::vector<std::vector<std::size_t>> rows_of(index.n_docs());
  for (std::size_t r = 0; r < docs.size(); ++r) rows_of[docs[r]].push_back(r);
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> rows(docs.size());
  for (std::size_t t = 0; t < index.n_terms(); ++t) {
    PostingReader p(index.postings(t));
    for (std::size_t i = 0; i < p.size(); ++i)
      for (const std::size_t r : rows_of[p.doc(i) - p.first()])
        rows[r].emplace_back(static_cast<std::uint32_t>(t), p.count(i));
  }
  QueryTerms out;
  out.mean_length = index.idf_length() / static_cast<double>(index.idf_docs());
  for (const auto& row : rows) {  // term ids ascend: so do the terms
    for (const auto& [t, count] : row) {
      out.terms.emplace_back(index.term(t));
      out.counts.push_back(count);
      out.idf.push_back(static_cast<float>(bm25_idf(index.idf_docs(), index.term_doc_freq(t))));
    }
    out.indptr.push_back(out.terms.size());
  }
  return out;
}

}  // namespace

QuerySet query_set_from_index(const Index& index, std::span<const std::size_t> docs,
                              bool with_terms) {
  QuerySet qs;
  const auto indptr = index.indptr();
  for (std::size_t i : docs) {
    if (i >= index.n_docs()) throw Error("document " + std::to_string(i) + " not in index");
    for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      qs.words.push_back(index.indices()[p]);
      qs.weights.push_back(index.values()[p]);
    }
    qs.indptr.push_back(qs.words.size());
    qs.ids.emplace_back(index.doc_id(i));
    qs.labels.emplace_back(index.label(i));
  }
  if (with_terms && index.has_terms()) qs.terms = document_terms(index, docs);
  return qs;
}

}  // namespace lcrwmd
