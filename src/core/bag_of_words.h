#pragma once
// Text -> (word id, count) -> normalised weights: the one path both index documents and
// queries take, so a document and the same text as a query get bit-identical histograms.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/text.h"

namespace lcrwmd {

struct WordCount {
  std::uint32_t word;
  std::uint32_t count;
};

// Calls visit(token) for each token of `doc` (a pretokenized one's tokens as given), read by
// tokenizer `version`; text it cannot read is an Error naming the document.
template <typename Visit>
void for_each_document_token(const RawDocument& doc, std::uint32_t version, Visit&& visit) {
  if (doc.pretokenized) {
    for (const std::string& token : doc.tokens) visit(std::string_view(token));
    return;
  }
  std::string scratch;
  try {
    for_each_token(doc.text, scratch, visit, version);
  } catch (const Error& e) {
    throw Error("document '" + doc.id + "'" +
                (doc.line ? " on line " + std::to_string(doc.line) : std::string()) + ": " +
                e.what());
  }
}

// lookup(token) -> std::optional<uint32_t>. Returns counts sorted by word id. The text is read
// by tokenizer `version`; one it cannot read is an Error naming the document. terms: where
// given, every token past the stop words, with a vector or without (what bm25 counts).
template <typename Lookup>
std::vector<WordCount> count_words(const RawDocument& doc, const StopWords* stopwords,
                                   Lookup&& lookup, TextReport& report,
                                   std::unordered_set<std::string>& unknown, std::uint32_t version,
                                   std::vector<std::string>* terms = nullptr) {
  std::vector<std::uint32_t> ids;
  auto visit = [&](std::string_view token) {
    ++report.tokens;
    if (stopwords != nullptr && stopwords->contains(token)) {
      ++report.stop_tokens;
      return;
    }
    if (terms != nullptr) terms->emplace_back(token);
    std::optional<std::uint32_t> id = lookup(token);
    if (!id) {
      ++report.unknown_tokens;
      if (unknown.emplace(token).second) ++report.unknown_distinct;
      return;
    }
    ids.push_back(*id);
  };
  for_each_document_token(doc, version, visit);
  std::sort(ids.begin(), ids.end());
  std::vector<WordCount> counts;
  for (std::uint32_t id : ids) {
    if (!counts.empty() && counts.back().word == id)
      ++counts.back().count;
    else
      counts.push_back({id, 1});
  }
  return counts;
}

// Tokens as (term, count), sorted by term.
inline std::vector<std::pair<std::string, std::uint32_t>> count_terms(
    std::vector<std::string> tokens) {
  std::sort(tokens.begin(), tokens.end());
  std::vector<std::pair<std::string, std::uint32_t>> out;
  for (std::string& t : tokens) {
    if (!out.empty() && out.back().first == t)
      ++out.back().second;
    else
      out.emplace_back(std::move(t), 1);
  }
  return out;
}

// L1-normalised term counts, optionally times idf(word), and times each word's weight in a
// learned metric (lcrwmd/metric.h; 1 without one); computed in double.
template <typename Idf, typename MetricWeight>
void append_weights(const std::vector<WordCount>& counts, Weighting weighting, Idf&& idf_of,
                    MetricWeight&& weight_of, std::vector<float>& out) {
  std::vector<double> w(counts.size());
  double total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    w[p] = counts[p].count * (weighting == Weighting::tfidf ? idf_of(counts[p].word) : 1.0) *
           weight_of(counts[p].word);
    total += w[p];
  }
  for (double x : w) out.push_back(static_cast<float>(x / total));
}

}  // namespace lcrwmd
