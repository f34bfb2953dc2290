// lcrwmd info and devices: what an index holds and costs, and what this machine runs.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/json_out.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"

namespace lcrwmd::app {

namespace {

// A collection of several segments or with deletions: its state and each segment's.
void collection_info(const std::string& path, bool json) {
  const Collection c = Collection::open(path, true);
  const SegmentSet live = c.documents();
  if (json) {
    nlohmann::json segments = nlohmann::json::array();
    for (std::size_t s = 0; s < c.n_segments(); ++s)
      segments.push_back({{"file", c.segment(s).source()},
                          {"n_docs", c.segment(s).n_docs()},
                          {"deleted", c.deleted(s).size()},
                          {"vocab_size", c.segment(s).vocab_size()},
                          {"file_bytes", c.segment(s).file_bytes()}});
    const nlohmann::json j = {{"collection", path},
                              {"generation", c.generation()},
                              {"n_docs", c.n_docs()},
                              {"deleted", c.n_deleted()},
                              {"vocab_size", live.vocab_size()},
                              {"dim", live.dim()},
                              {"embeddings", c.embeddings()},
                              {"segments", segments}};
    std::printf("%s\n", to_bytes(j).c_str());
    return;
  }
  std::printf("collection   %s (generation %llu, every file checked)\n", path.c_str(),
              static_cast<unsigned long long>(c.generation()));
  std::printf("documents    %zu live, %zu deleted (dropped by `lcrwmd compact`)\n", c.n_docs(),
              c.n_deleted());
  std::printf("vocabulary   %zu distinct words over its segments, dimension %zu\n",
              live.vocab_size(), live.dim());
  std::printf("embeddings   %s (new words' vectors)\n", c.embeddings().c_str());
  for (std::size_t s = 0; s < c.n_segments(); ++s)
    std::printf("segment      %s: %zu documents, %zu deleted, %zu words, %.1f MiB\n",
                c.segment(s).source().c_str(), c.segment(s).n_docs(), c.deleted(s).size(),
                c.segment(s).vocab_size(),
                static_cast<double>(c.segment(s).file_bytes()) / (1 << 20));
}

}  // namespace

void add_info(CLI::App& app) {
  auto* c = app.add_subcommand("info", "Sizes and memory of an index");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  c->add_option("--index", *path, "Index file, or collection directory")->required();
  c->add_flag("--json", *json, "Machine-readable output");
  c->callback([path, json] {
    if (Collection::exists(*path) && !Collection::open(*path, true).is_one_index())
      return collection_info(*path, *json);
    const Index ix = load_index(*path, true);
    const double n = static_cast<double>(ix.n_docs());
    const std::size_t csr = ix.nnz() * 8 + (ix.n_docs() + 1) * 8;
    const std::size_t vec = ix.vocab_size() * ix.dim() * 4;
    // Working memory of one query of the mean length beyond the mapped index (LC-RWMD).
    const double h = n > 0 ? static_cast<double>(ix.nnz()) / n : 0.0;
    const auto words = static_cast<std::size_t>(std::lround(h));
    SearchOptions o;
    o.direction = Direction::document_to_query;
    const std::size_t one_sided = cpu_query_bytes(ix, o, words);
    o.direction = Direction::symmetric;
    const std::size_t symmetric = cpu_query_bytes(ix, o, words);
    const std::vector<std::string> stop = ix.stopwords().sorted();
    std::size_t postings = 0;
    for (std::size_t t = 0; t < ix.n_terms(); ++t) postings += ix.postings(t).size;
    const std::size_t lexical = ix.lexical_bytes();
    char fingerprint[19];
    std::snprintf(fingerprint, sizeof fingerprint, "%016llx",
                  static_cast<unsigned long long>(ix.embeddings_fingerprint()));
    const Metric* metric = ix.metric();
    char metric_fingerprint[19] = "";
    if (metric)
      std::snprintf(metric_fingerprint, sizeof metric_fingerprint, "%016llx",
                    static_cast<unsigned long long>(metric->fingerprint()));
    if (*json) {
      nlohmann::json metric_json = nullptr;
      if (metric)
        metric_json = {{"fingerprint", metric_fingerprint},
                       {"in_dim", metric->in_dim()},
                       {"out_dim", metric->out_dim()},
                       {"weighted_words", metric->words().size()}};
      const nlohmann::json j = {{"path", *path},
                                {"n_docs", ix.n_docs()},
                                {"vocab_size", ix.vocab_size()},
                                {"dim", ix.dim()},
                                {"nnz", ix.nnz()},
                                {"mean_words_per_doc", h},
                                {"terms", ix.n_terms()},
                                {"postings", postings},
                                {"postings_bytes", lexical},
                                {"weighting", to_string(ix.weighting())},
                                {"tokenizer_version", ix.tokenizer_version()},
                                {"stopwords", stop},
                                {"embeddings_fingerprint", fingerprint},
                                {"unit_vectors", ix.unit_vectors()},
                                {"metric", metric_json},
                                {"has_text", ix.has_text()},
                                {"text_bytes", ix.text_bytes()},
                                {"file_bytes", ix.file_bytes()},
                                {"csr_bytes", csr},
                                {"vector_bytes", vec},
                                {"query_bytes_one_sided", one_sided},
                                {"query_bytes_symmetric", symmetric}};
      std::printf("%s\n", to_bytes(j).c_str());
    } else {
      std::string stop_list;
      for (std::size_t i = 0; i < stop.size() && i < 8; ++i) stop_list += (i ? ", " : "") + stop[i];
      if (stop.size() > 8) stop_list += ", ...";
      std::printf("index        %s (checksum ok)\n", path->c_str());
      std::printf("documents    %zu\n", ix.n_docs());
      std::printf("vocabulary   %zu words (compacted)\n", ix.vocab_size());
      std::printf("dimension    %zu\n", ix.dim());
      std::printf("nonzeros     %zu (%.1f distinct words per document)\n", ix.nnz(), h);
      if (ix.has_terms())
        std::printf("terms        %zu (every token past the stop words, for bm25), %zu postings\n",
                    ix.n_terms(), postings);
      else
        std::printf("terms        none (bm25 needs an index from `lcrwmd build`)\n");
      std::printf("weighting    %s (document frequencies kept for queries)\n",
                  to_string(ix.weighting()));
      std::printf("tokenizer    version %u\n", ix.tokenizer_version());
      std::printf("stop words   %zu%s%s (applied to queries too)\n", stop.size(),
                  stop.empty() ? "" : ": ", stop_list.c_str());
      std::printf(
          "embeddings   fingerprint %s (its words' vectors%s; --embeddings at query time "
          "must match)\n",
          fingerprint, ix.unit_vectors() ? ", each scaled to unit length" : "");
      if (metric)
        std::printf(
            "metric       learned, fingerprint %s: vectors of dimension %zu mapped to %zu, %zu "
            "words weighted (applied to queries too)\n",
            metric_fingerprint, metric->in_dim(), metric->out_dim(), metric->words().size());
      if (ix.has_text())
        std::printf("texts        kept, %.1f MiB compressed\n",
                    static_cast<double>(ix.text_bytes()) / (1 << 20));
      else
        std::printf("texts        not kept (built with --no-text)\n");
      std::printf(
          "file         %.1f MiB (histograms %.1f MiB, vectors %.1f MiB, postings %.1f MiB)\n",
          static_cast<double>(ix.file_bytes()) / (1 << 20), static_cast<double>(csr) / (1 << 20),
          static_cast<double>(vec) / (1 << 20), static_cast<double>(lexical) / (1 << 20));
      std::printf("per query    %.1f MiB one-sided, %.1f MiB symmetric (LC-RWMD working memory)\n",
                  static_cast<double>(one_sided) / (1 << 20),
                  static_cast<double>(symmetric) / (1 << 20));
    }
  });
}

void add_devices(CLI::App& app) {
  auto* c = app.add_subcommand("devices", "The CPU's kernels and the CUDA GPUs this build can use");
  c->callback([] {
    std::printf("cpu\t%s kernels\t%d threads\n", cpu_simd_level(), omp_get_max_threads());
    std::printf("blas\t%s\n", blas_description().c_str());
    // Phase 1's precisions: what auto takes, and each one this CPU runs (or what it lacks).
    std::printf("phase 1\tauto: %s\n", describe_precision(Precision::automatic).c_str());
    if (const std::string timed = timed_precisions(); !timed.empty())
      std::printf("phase 1\tauto timed here: %s\n", timed.c_str());
    for (Precision p : {Precision::f32, Precision::bf16, Precision::int8}) {
      try {
        std::printf("phase 1\t%s\n", describe_precision(p).c_str());
      } catch (const Error& e) {
        std::printf("phase 1\t%s\n", e.what());
      }
    }
    if (!built_with_cuda()) {
      std::printf("built without CUDA: the cpu backend only\n");
      return;
    }
    const std::vector<GpuDevice> devices = gpu_devices();
    if (devices.empty())
      std::printf("no CUDA device found (no GPU or no driver): --backend auto runs on the cpu\n");
    for (const GpuDevice& d : devices)
      std::printf("%d\t%s\tcompute %d.%d\t%zu MiB (%zu MiB free)\tphase 1 auto: %s\n", d.id,
                  d.name.c_str(), d.compute_major, d.compute_minor, d.total_bytes >> 20,
                  d.free_bytes >> 20, to_string(gpu_precision(d)));
  });
}

}  // namespace lcrwmd::app
