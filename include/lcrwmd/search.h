#pragma once
// Distances between a batch of queries and every resident document, and top-k search.
//
//   Index index = Index::load("corpus.idx");
//   QuerySet q = make_query_set(index, read_tsv("queries.tsv"), {});
//   SearchResults r = search(index, q, 10, {});   // symmetric LC-RWMD, top 10
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/query.h"

namespace lcrwmd {

enum class Method {
  wcd,      // Word Centroid Distance
  rwmd,     // quadratic RWMD: per pair cost matrix, row and column minima (the reference)
  lc_rwmd,  // linear-complexity RWMD (Atasu et al. 2017)
  wmd,      // exact Word Mover's Distance (an EMD per pair; top-k pruned by the RWMD bounds)
};
const char* to_string(Method m);
Method parse_method(std::string_view s);  // "wcd" | "rwmd" | "lc-rwmd" | "wmd"

enum class Backend {
  cpu,        // BLAS + threads
  cuda,       // one NVIDIA GPU (lcrwmd/gpu.h); an error where there is none
  automatic,  // the GPU where one is present and the method runs there (all but wmd)
};
const char* to_string(Backend b);
Backend parse_backend(std::string_view s);  // "cpu" | "cuda" | "auto"

struct SearchOptions {
  Method method = Method::lc_rwmd;
  // RWMD methods: D = max(D1, D2). false: D1 = R(document -> query) only. WMD is symmetric.
  bool symmetric = true;
  // Queries that share one phase-1 pass (one GEMM against all their distinct words).
  std::size_t batch = 64;
  // Bytes of working memory a batch may use beyond the index; batches shrink to fit.
  std::size_t memory_budget = std::size_t{2} << 30;
  // Top-k of a bounded method (symmetric LC-RWMD, WMD): compute the exact distance only for
  // documents whose lower bound still beats the k-th best; the results are the same.
  bool prune = true;
  // Phase-1 tile shape (vocabulary rows x query words); 0 picks a cache-friendly size.
  std::size_t tile_rows = 0;
  std::size_t tile_words = 0;
  // Where the distances are computed: the CPU unless asked (the command line asks for auto).
  // The GPU keeps the resident set in device memory for the call (lcrwmd::GpuIndex keeps it
  // across calls).
  Backend backend = Backend::cpu;
  // CUDA backend: the device; bytes of device memory the batches may use beyond the resident
  // set (0: most of what is free); documents per resident chunk (0: as many as fit; a set too
  // large for the device is processed in chunks, uploaded in turn); and whether the phase-1
  // GEMM may run on TF32 tensor cores (faster; distances to ~1e-3 relative, see BENCHMARKS.md).
  // tile_words also caps the query words per phase-1 GEMM there.
  int device = 0;
  std::size_t device_memory_budget = 0;
  std::size_t device_chunk_docs = 0;
  bool allow_tf32 = false;
  // Called after each batch with (queries done, queries in all); for progress reports.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct SearchStats {
  std::size_t batches = 0;
  std::size_t distances = 0;       // query-document pairs bounded or computed
  std::size_t refined = 0;         // pairs whose exact distance was computed from a bound:
                                   // D2 for symmetric LC-RWMD, an EMD solve for WMD
  std::size_t tightened = 0;       // WMD: tighter bounds computed (a pair's RWMD, its dual bound)
  Backend backend = Backend::cpu;  // where the distances were computed
  std::size_t device_chunks = 0;   // CUDA: resident chunks the documents were split into
};

// Row q holds the k' = min(k, n_docs) nearest documents of query q, best first: ascending
// distance, ties broken by the smaller document index.
struct SearchResults {
  std::size_t n_queries = 0;
  std::size_t k = 0;
  std::vector<float> distances;       // n_queries x k
  std::vector<std::int64_t> indices;  // n_queries x k
};

SearchResults search(const Index& index, const QuerySet& queries, std::size_t k,
                     const SearchOptions& options, SearchStats* stats = nullptr);

// The full distance matrix, streamed batch by batch: sink(first_query, n_rows, rows) with
// rows[r * n_docs + i] the distance of query first_query + r to document i.
using RowSink = std::function<void(std::size_t, std::size_t, const float*)>;
void pairwise(const Index& index, const QuerySet& queries, const SearchOptions& options,
              const RowSink& sink, SearchStats* stats = nullptr);

}  // namespace lcrwmd

namespace lcrwmd {
// Threads for our kernels and for BLAS; n <= 0 keeps the default (all cores).
void set_threads(int n);
}  // namespace lcrwmd
