// The methods' descriptions (lcrwmd/method.h): one entry per method.
#include "lcrwmd/error.h"
#include "lcrwmd/method.h"
#include "methods/method_impl.h"

namespace lcrwmd {
namespace {

constexpr MethodInfo kMethods[] = {
    {.method = Method::wcd,
     .name = "wcd",
     .summary =
         "Word Centroid Distance: between the documents' weighted mean vectors; below RWMD, the "
         "cheapest",
     .symmetric = true,
     .document_to_query = false,
     .query_to_document = false,
     .bounded = false,
     .word_pass = WordPass::none,
     .caches_word_distances = false,
     .reads_act_steps = false,
     .runs_on_gpu = true,
     .explains = false,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kWcdImpl},
    {.method = Method::rwmd,
     .name = "rwmd",
     .summary =
         "quadratic RWMD: each pair's word costs, their row and column minima (the reference the "
         "linear-complexity methods are tested against)",
     .symmetric = true,
     .document_to_query = true,
     .query_to_document = true,
     .bounded = false,
     .word_pass = WordPass::none,
     .caches_word_distances = false,
     .reads_act_steps = false,
     .runs_on_gpu = true,
     .explains = true,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kRwmdImpl},
    {.method = Method::lc_rwmd,
     .name = "lc-rwmd",
     .summary = "linear-complexity RWMD (Atasu et al. 2017): rwmd's values, each vocabulary word's "
                "nearest "
                "query word found once per query; the default",
     .symmetric = true,
     .document_to_query = true,
     .query_to_document = true,
     .bounded = true,
     .word_pass = WordPass::nearest,
     .caches_word_distances = true,
     .reads_act_steps = false,
     .runs_on_gpu = true,
     .explains = true,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kLcRwmdImpl},
    // WMD's batch only shares phase 1 among queries whose pruned solves then dominate; a
    // smaller one keeps its cache of word distances smaller and closer to the CPU (bbcsport
    // top-10: 16 queries per batch took 2-8% less CPU time than 64 in three alternating pairs).
    {.method = Method::wmd,
     .name = "wmd",
     .summary =
         "exact Word Mover's Distance, an EMD per pair; top-k solves only the pairs the RWMD and "
         "dual bounds leave a chance",
     .symmetric = true,
     .document_to_query = false,
     .query_to_document = false,
     .bounded = true,
     .word_pass = WordPass::nearest,
     .caches_word_distances = true,
     .reads_act_steps = false,
     .runs_on_gpu = false,
     .explains = true,
     .max_cpu_batch = 16,
     .costly_exact = true,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kWmdImpl},
    {.method = Method::act,
     .name = "act",
     .summary =
         "ACT-k (Atasu & Mittelholzer 2019): each word's transfer capped over its k = act_steps "
         "nearest words; RWMD <= ACT-k <= WMD, linear complexity",
     .symmetric = true,
     .document_to_query = true,
     .query_to_document = true,
     .bounded = true,
     .word_pass = WordPass::capped,
     .caches_word_distances = true,
     .reads_act_steps = true,
     .runs_on_gpu = true,
     .explains = true,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kActImpl},
    {.method = Method::ict,
     .name = "ict",
     .summary = "ICT: ACT with every capped step it can take; ACT-k <= ICT <= WMD",
     .symmetric = true,
     .document_to_query = true,
     .query_to_document = true,
     .bounded = true,
     .word_pass = WordPass::capped,
     .caches_word_distances = true,
     .reads_act_steps = false,
     .runs_on_gpu = true,
     .explains = true,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = false,
     .reads_terms = false,
     .whole_index = false,
     .impl = &kActImpl},
    {.method = Method::bm25,
     .name = "bm25",
     .summary = "Okapi BM25 (k1 = bm25_k1, b = bm25_b) over the documents' terms, with a vector or "
                "without; its distance is minus its score (front ends show the score), and only "
                "documents sharing a term are found",
     .symmetric = false,
     .document_to_query = false,
     .query_to_document = true,
     .bounded = false,
     .word_pass = WordPass::none,
     .caches_word_distances = false,
     .reads_act_steps = false,
     .runs_on_gpu = false,
     .explains = false,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = true,
     .ranks_by_score = true,
     .reads_terms = true,
     .whole_index = false,
     .impl = &kBm25Impl},
    // Phase 1 and its cache as LC-RWMD's query-to-document, which it computes for every document.
    {.method = Method::hybrid,
     .name = "hybrid",
     .summary =
         "bm25's score and lc-rwmd's query-to-document distance, each standardised over the "
         "documents (z-scores), summed with the distance's weight hybrid_weight: lexical and "
         "embedding evidence together",
     .symmetric = false,
     .document_to_query = false,
     .query_to_document = true,
     .bounded = false,
     .word_pass = WordPass::nearest,
     .caches_word_distances = true,
     .reads_act_steps = false,
     .runs_on_gpu = false,
     .explains = false,
     .max_cpu_batch = 0,
     .costly_exact = false,
     .lexical = false,
     .ranks_by_score = true,
     .reads_terms = true,
     .whole_index = true,
     .impl = &kHybridImpl},
};

}  // namespace

std::span<const MethodInfo> methods() { return kMethods; }

std::vector<std::pair<const char*, bool>> method_properties(const MethodInfo& m) {
  return {{"document_to_query", m.document_to_query},
          {"query_to_document", m.query_to_document},
          {"bounded", m.bounded},
          {"reads_act_steps", m.reads_act_steps},
          {"runs_on_gpu", m.runs_on_gpu},
          {"explains", m.explains}};
}

const MethodInfo& describe(Method m) {
  for (const MethodInfo& info : kMethods)
    if (info.method == m) return info;
  throw Error("unknown method");
}

const char* to_string(Method m) { return describe(m).name; }

bool has_direction(const MethodInfo& m, Direction d) {
  switch (d) {
    case Direction::symmetric:
      return m.symmetric;
    case Direction::document_to_query:
      return m.document_to_query;
    case Direction::query_to_document:
      return m.query_to_document;
  }
  return false;
}

Direction default_direction(const MethodInfo& m) {
  if (m.symmetric) return Direction::symmetric;
  return m.query_to_document ? Direction::query_to_document : Direction::document_to_query;
}

Direction resolve_direction(const MethodInfo& m, std::optional<Direction> asked, bool one_sided) {
  if (one_sided && asked && *asked != Direction::document_to_query)
    throw Error(std::string("one-sided is the direction document-to-query, not ") +
                to_string(*asked) + ": give one of them");
  if (one_sided) return Direction::document_to_query;
  return asked ? *asked : default_direction(m);
}

std::vector<const char*> directions(const MethodInfo& m) {
  std::vector<const char*> names;
  for (const Direction d : kDirections)
    if (has_direction(m, d)) names.push_back(to_string(d));
  return names;
}

std::string prose_list(const std::vector<const char*>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

std::string direction_names(const MethodInfo& m) { return prose_list(directions(m)); }

const char* to_string(Direction d) {
  switch (d) {
    case Direction::symmetric:
      return "symmetric";
    case Direction::document_to_query:
      return "document-to-query";
    case Direction::query_to_document:
      return "query-to-document";
  }
  return "?";
}

Direction parse_direction(std::string_view s) {
  for (const Direction d : kDirections)
    if (s == to_string(d)) return d;
  throw Error("unknown direction '" + std::string(s) +
              "' (expected symmetric, document-to-query or query-to-document)");
}

Method parse_method(std::string_view s) {
  for (const MethodInfo& info : kMethods)
    if (s == info.name) return info.method;
  throw Error("unknown method '" + std::string(s) + "' (expected " + method_names() + ")");
}

}  // namespace lcrwmd
