// Documents + embeddings -> compacted CSR index data.
#include <unordered_set>

#include "core/bag_of_words.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/string_map.h"

namespace lcrwmd {
namespace {

// What a document shows: its text, or its tokens joined by spaces where it came as tokens.
std::string display_text(const RawDocument& doc) {
  if (!doc.pretokenized) return doc.text;
  std::string s;
  for (const std::string& t : doc.tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

}  // namespace

IndexData build_index_data(const Embeddings& embeddings, const std::vector<RawDocument>& docs,
                           const BuildOptions& options, TextReport* report_out) {
  TextReport report;
  std::unordered_set<std::string> unknown;
  StringMap<std::size_t> seen_ids;
  std::vector<std::vector<WordCount>> kept;
  IndexData d;
  d.dim = embeddings.dim();
  d.weighting = options.weighting;
  if (options.stopwords != nullptr) d.stopwords = options.stopwords->sorted();

  auto lookup = [&](std::string_view t) { return embeddings.find(t); };
  for (const RawDocument& doc : docs) {
    ++report.documents_read;
    auto [it, fresh] = seen_ids.emplace(doc.id, doc.line);
    if (!fresh)
      throw Error("document id '" + doc.id + "' on line " + std::to_string(doc.line) +
                  " repeats the id of line " + std::to_string(it->second));
    std::vector<WordCount> counts = count_words(doc, options.stopwords, lookup, report, unknown);
    if (counts.empty()) {
      report.empty_documents.push_back(doc.id);
      continue;
    }
    kept.push_back(std::move(counts));
    d.ids.push_back(doc.id);
    d.labels.push_back(doc.label);
    if (options.keep_text) d.texts.push_back(display_text(doc));
  }
  report.documents_kept = kept.size();
  if (report_out) *report_out = report;
  if (kept.empty())
    throw Error("no document has a word with an embedding: nothing to index (" +
                std::to_string(report.documents_read) + " documents read)");

  // Vocabulary compaction: only words that occur, in embeddings order.
  constexpr std::uint32_t kUnused = ~0u;
  std::vector<std::uint32_t> compact(embeddings.size(), kUnused);
  for (const auto& counts : kept)
    for (const WordCount& wc : counts) compact[wc.word] = 0;
  for (std::size_t e = 0; e < embeddings.size(); ++e) {
    if (compact[e] == kUnused) continue;
    compact[e] = static_cast<std::uint32_t>(d.vocab.size());
    d.vocab.push_back(embeddings.word(e));
    d.vectors.insert(d.vectors.end(), embeddings.vector(e), embeddings.vector(e) + d.dim);
  }
  d.doc_freq.assign(d.vocab.size(), 0);
  for (auto& counts : kept)
    for (WordCount& wc : counts) {
      wc.word = compact[wc.word];  // monotone map: order within the document is kept
      ++d.doc_freq[wc.word];
    }

  const std::size_t n = kept.size();
  auto idf_of = [&](std::uint32_t u) { return idf(n, d.doc_freq[u]); };
  for (const auto& counts : kept) {
    for (const WordCount& wc : counts) d.indices.push_back(wc.word);
    append_weights(counts, d.weighting, idf_of, d.values);
    d.indptr.push_back(d.indices.size());
  }
  return d;
}

}  // namespace lcrwmd
