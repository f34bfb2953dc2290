// Documents + embeddings -> compacted CSR index data.
#include <algorithm>
#include <exception>
#include <numeric>
#include <unordered_set>
#include <utility>

#include "core/bag_of_words.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/string_map.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {
namespace {

// What a document shows: its text, or its tokens joined by spaces where it came as tokens.
std::string display_text(const RawDocument& doc) {
  if (!doc.pretokenized) return doc.text;
  std::string s;
  for (const std::string& t : doc.tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

// The lexical part of documents `docs` (checked in range) of `d`, into `p`: the whole's terms and
// frequencies (every shard answers for every term), its postings among them.
void select_terms(const IndexData& d, std::span<const std::size_t> docs, IndexData& p) {
  if (d.terms.empty()) return;
  p.terms = d.terms;
  p.term_doc_freq = d.term_doc_freq;
  p.idf_length = d.idf_length;
  if (p.idf_length == 0)
    for (const std::uint32_t l : d.doc_lengths) p.idf_length += l;
  constexpr std::uint32_t kOut = ~0u;
  std::vector<std::uint32_t> place(d.ids.size(), kOut);
  for (std::size_t r = 0; r < docs.size(); ++r) {
    if (place[docs[r]] != kOut)
      throw Error("document " + std::to_string(docs[r]) + " is selected twice");
    place[docs[r]] = static_cast<std::uint32_t>(r);
    p.doc_lengths.push_back(d.doc_lengths[docs[r]]);
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> run;
  p.posting_indptr.assign(1, 0);
  for (std::size_t t = 0; t < d.terms.size(); ++t) {
    run.clear();
    for (std::uint64_t q = d.posting_indptr[t]; q < d.posting_indptr[t + 1]; ++q)
      if (place[d.posting_docs[q]] != kOut)
        run.emplace_back(place[d.posting_docs[q]], d.posting_counts[q]);
    std::sort(run.begin(), run.end());
    for (const auto& [doc, count] : run) {
      p.posting_docs.push_back(doc);
      p.posting_counts.push_back(count);
    }
    p.posting_indptr.push_back(p.posting_docs.size());
  }
}

// One document as read: its words' counts, its terms' counts, what it adds to the report, or
// why it could not be read.
struct Read {
  std::vector<WordCount> counts;
  std::vector<std::pair<std::string, std::uint32_t>> terms;
  TextReport report;
  std::unordered_set<std::string> unknown;
  std::exception_ptr error;
};

}  // namespace

bool unit_vectors_by_default(const WordVectors& vectors, const Metric* metric) {
  return metric != nullptr ? metric->unit_vectors() : vectors.format() == "fasttext";
}

IndexData build_index_data(const Embeddings& embeddings, const std::vector<RawDocument>& docs,
                           const BuildOptions& options, TextReport* report_out) {
  TextReport report;
  std::unordered_set<std::string> unknown;
  StringMap<std::size_t> seen_ids;
  std::vector<std::vector<WordCount>> kept;
  // The kept documents' terms (ids into `terms`, in the order first seen) and counts.
  StringMap<std::uint32_t> term_ids;
  std::vector<std::string> terms;
  std::vector<std::uint64_t> term_indptr{0};
  std::vector<std::uint32_t> doc_terms, term_counts;
  IndexData d;
  const Metric* metric = options.metric.get();
  const std::size_t in_dim = embeddings.dim();
  if (metric != nullptr &&
      (metric->in_dim() != in_dim || metric->unit_vectors() != options.unit_vectors))
    throw Error("the metric maps vectors of dimension " + std::to_string(metric->in_dim()) +
                (metric->unit_vectors() ? " scaled to length 1" : "") + ", this build's have " +
                std::to_string(in_dim) + (options.unit_vectors ? " scaled to length 1" : ""));
  d.dim = metric != nullptr ? metric->out_dim() : in_dim;
  d.weighting = options.weighting;
  d.unit_vectors = options.unit_vectors;
  d.metric = options.metric;
  if (options.stopwords != nullptr) d.stopwords = options.stopwords->sorted();

  // Documents are read (tokenised, looked up, counted) in parallel, a block at a time, and
  // taken in their order, so the index and the report are the same bytes on any number of
  // threads; the block bounds the memory held for documents read but not yet taken.
  constexpr std::size_t kBlock = 4096;
  std::vector<Read> block;
  auto lookup = [&](std::string_view t) { return embeddings.find(t); };
  for (std::size_t begin = 0; begin < docs.size(); begin += kBlock) {
    const std::size_t end = std::min(docs.size(), begin + kBlock);
    block.assign(end - begin, Read{});
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t i = begin; i < end; ++i) {
      Read& r = block[i - begin];
      try {
        std::vector<std::string> tokens;
        r.counts = count_words(docs[i], options.stopwords, lookup, r.report, r.unknown,
                               d.tokenizer_version, &tokens);
        if (!r.counts.empty()) r.terms = count_terms(std::move(tokens));
      } catch (...) {
        r.error = std::current_exception();
      }
    }
    for (std::size_t i = begin; i < end; ++i) {
      const RawDocument& doc = docs[i];
      Read& r = block[i - begin];
      ++report.documents_read;
      auto [it, fresh] = seen_ids.emplace(doc.id, doc.line);
      if (!fresh)
        throw Error("document id '" + doc.id + "' on line " + std::to_string(doc.line) +
                    " repeats the id of line " + std::to_string(it->second));
      if (r.error) std::rethrow_exception(r.error);
      report.tokens += r.report.tokens;
      report.stop_tokens += r.report.stop_tokens;
      report.unknown_tokens += r.report.unknown_tokens;
      for (const std::string& word : r.unknown)
        if (unknown.insert(word).second) ++report.unknown_distinct;
      if (r.counts.empty()) {
        report.empty_documents.push_back(doc.id);
        continue;
      }
      kept.push_back(std::move(r.counts));
      for (auto& [term, count] : r.terms) {
        const auto [known, added] =
            term_ids.try_emplace(term, static_cast<std::uint32_t>(terms.size()));
        if (added) terms.push_back(std::move(term));
        doc_terms.push_back(known->second);
        term_counts.push_back(count);
      }
      term_indptr.push_back(doc_terms.size());
      d.ids.push_back(doc.id);
      d.labels.push_back(doc.label);
      if (options.keep_text) d.texts.push_back(display_text(doc));
      r = Read{};
    }
  }
  report.documents_kept = kept.size();
  if (report_out) *report_out = report;
  if (kept.empty())
    throw Error("no document has a word with an embedding: nothing to index (" +
                std::to_string(report.documents_read) + " documents read)");

  // Vocabulary compaction: only words that occur, in the index's order (vocabulary_before),
  // whatever order the vectors came in, so that a merge of builds gives one build's bytes.
  constexpr std::uint32_t kUnused = ~0u;
  std::vector<std::uint32_t> compact(embeddings.size(), kUnused), used;
  std::vector<std::uint32_t> df(embeddings.size(), 0);
  for (const auto& counts : kept)
    for (const WordCount& wc : counts) {
      if (std::exchange(compact[wc.word], 0) == kUnused) used.push_back(wc.word);
      ++df[wc.word];
    }
  std::sort(used.begin(), used.end(), [&](std::uint32_t a, std::uint32_t b) {
    return vocabulary_before(df[a], embeddings.word(a), df[b], embeddings.word(b));
  });
  // Each word's vector (scaled, then mapped by the metric) and its weight in the metric.
  std::vector<float> scaled(in_dim);
  std::vector<double> word_weight;
  d.vectors.resize(used.size() * d.dim);
  for (const std::uint32_t e : used) {
    const std::size_t u = d.vocab.size();
    compact[e] = static_cast<std::uint32_t>(u);
    d.vocab.push_back(embeddings.word(e));
    std::copy(embeddings.vector(e), embeddings.vector(e) + in_dim, scaled.begin());
    if (d.unit_vectors) to_unit_length(scaled.data(), in_dim);
    if (metric != nullptr) {
      metric->apply(scaled.data(), d.vectors.data() + u * d.dim);
      word_weight.push_back(metric->weight(d.vocab.back()));
    } else {
      std::copy(scaled.begin(), scaled.end(),
                d.vectors.begin() + static_cast<std::ptrdiff_t>(u * d.dim));
    }
    d.doc_freq.push_back(df[e]);
  }
  for (auto& counts : kept) {
    for (WordCount& wc : counts) wc.word = compact[wc.word];
    std::sort(counts.begin(), counts.end(),
              [](const WordCount& a, const WordCount& b) { return a.word < b.word; });
  }

  const std::size_t n = kept.size();
  auto idf_of = [&](std::uint32_t u) { return idf(n, d.doc_freq[u]); };
  auto weight_of = [&](std::uint32_t u) { return metric != nullptr ? word_weight[u] : 1.0; };
  for (const auto& counts : kept) {
    for (const WordCount& wc : counts) d.indices.push_back(wc.word);
    append_weights(counts, d.weighting, idf_of, weight_of, d.values);
    d.indptr.push_back(d.indices.size());
  }
  set_terms(d, std::move(terms), term_indptr, doc_terms, term_counts);
  return d;
}

void set_terms(IndexData& d, std::vector<std::string> terms, std::span<const std::uint64_t> indptr,
               std::span<const std::uint32_t> term_ids, std::span<const std::uint32_t> counts) {
  const std::size_t t = terms.size(), n = indptr.size() - 1;
  std::vector<std::uint32_t> order(t), rank(t);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return terms[a] < terms[b]; });
  d.terms.clear();
  for (std::size_t r = 0; r < t; ++r) {
    rank[order[r]] = static_cast<std::uint32_t>(r);
    d.terms.push_back(std::move(terms[order[r]]));
  }
  d.term_doc_freq.assign(t, 0);
  for (const std::uint32_t id : term_ids) ++d.term_doc_freq[rank[id]];
  d.posting_indptr.assign(t + 1, 0);
  for (std::size_t r = 0; r < t; ++r)
    d.posting_indptr[r + 1] = d.posting_indptr[r] + d.term_doc_freq[r];
  d.posting_docs.resize(term_ids.size());
  d.posting_counts.resize(term_ids.size());
  d.doc_lengths.assign(n, 0);
  std::vector<std::uint64_t> next(d.posting_indptr.begin(), d.posting_indptr.end() - 1);
  for (std::size_t i = 0; i < n; ++i)  // in document order: each term's postings ascend
    for (std::uint64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      const std::uint64_t at = next[rank[term_ids[p]]]++;
      d.posting_docs[at] = static_cast<std::uint32_t>(i);
      d.posting_counts[at] = counts[p];
      d.doc_lengths[i] += counts[p];
    }
  d.idf_length = 0;
}

IndexData select_documents(const IndexData& d, std::span<const std::size_t> docs) {
  const std::size_t v = d.vocab.size(), m = d.dim;
  IndexData p;
  p.dim = m;
  p.weighting = d.weighting;
  p.stopwords = d.stopwords;
  p.tokenizer_version = d.tokenizer_version;
  p.unit_vectors = d.unit_vectors;
  p.metric = d.metric;
  p.idf_docs = d.idf_docs != 0 ? d.idf_docs : d.ids.size();
  // Its own vocabulary: the words its documents use, in the whole's order (so each document's
  // words stay ascending).
  std::vector<bool> used(v, false);
  for (const std::size_t i : docs) {
    if (i >= d.ids.size())
      throw Error("document " + std::to_string(i) + " is out of range (the index has " +
                  std::to_string(d.ids.size()) + ")");
    for (std::uint64_t q = d.indptr[i]; q < d.indptr[i + 1]; ++q) used[d.indices[q]] = true;
  }
  std::vector<std::uint32_t> local(v);
  for (std::size_t u = 0; u < v; ++u) {
    if (!used[u]) continue;
    local[u] = static_cast<std::uint32_t>(p.vocab.size());
    p.vocab.push_back(d.vocab[u]);
    p.vectors.insert(p.vectors.end(), d.vectors.begin() + static_cast<std::ptrdiff_t>(u * m),
                     d.vectors.begin() + static_cast<std::ptrdiff_t>((u + 1) * m));
    p.doc_freq.push_back(d.doc_freq[u]);
  }
  select_terms(d, docs, p);
  for (const std::size_t i : docs) {
    for (std::uint64_t q = d.indptr[i]; q < d.indptr[i + 1]; ++q) {
      p.indices.push_back(local[d.indices[q]]);
      p.values.push_back(d.values[q]);
    }
    p.indptr.push_back(p.indices.size());
    p.ids.push_back(d.ids[i]);
    p.labels.push_back(d.labels[i]);
    if (!d.texts.empty()) p.texts.push_back(d.texts[i]);
  }
  return p;
}

std::vector<IndexData> split_index_data(const IndexData& d, std::size_t parts) {
  const std::size_t n = d.ids.size();
  if (parts == 0 || parts > n)
    throw Error(std::to_string(n) + " documents cannot make " + std::to_string(parts) +
                " shards (each needs at least one document)");
  std::vector<IndexData> out;
  std::vector<std::size_t> range;
  for (std::size_t s = 0; s < parts; ++s) {
    range.resize(n * (s + 1) / parts - n * s / parts);
    std::iota(range.begin(), range.end(), n * s / parts);
    out.push_back(select_documents(d, range));
  }
  return out;
}

}  // namespace lcrwmd
