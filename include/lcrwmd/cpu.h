#pragma once
// The CPU backend (beside lcrwmd/gpu.h): BLAS or oneDNN for phase 1's GEMM, our kernels and
// OpenMP threads for the rest, within a working-memory budget.
//
//   CpuSearcher cpu(index, {.precision = Precision::automatic});
//   SearchResults r = cpu.search(queries, 10, {});
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "lcrwmd/index.h"
#include "lcrwmd/precision.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

struct WalkingBatch;  // methods/method_impl.h

// The CPU backend's working memory and tiles.
struct CpuOptions {
  // Bytes of working memory a batch may use beyond the index; batches shrink to fit.
  std::size_t memory_budget = std::size_t{2} << 30;
  // Phase-1 tile shape (vocabulary rows x query words); 0 picks a cache-friendly size.
  std::size_t tile_rows = 0;
  std::size_t tile_words = 0;
  // Phase 1's GEMM (see Precision). The vocabulary is rounded once per searcher.
  Precision precision = Precision::automatic;
};

// Working memory one query of `query_words` distinct words takes on the CPU beyond the index,
// as the batch planner counts it for a top-k search: its row of distances (or bounds), what
// phase 1 keeps for it per vocabulary word and, for a method that keeps phase 1's word
// distances, that cache. Batches hold as many queries as CpuOptions::memory_budget has room for.
std::size_t cpu_query_bytes(const Index& index, const SearchOptions& options,
                            std::size_t query_words);

// The SIMD level the CPU kernels run at on this machine: "scalar", "avx2" or "avx512" (chosen
// once from cpuid; the environment variable LCRWMD_SIMD caps it). Results do not depend on it.
const char* cpu_simd_level();

// OpenBLAS (the f32 phase 1, metric learning's products): its build and the kernels it chose
// for this CPU, with a note where they are below the CPU's SIMD level (an OpenBLAS that does
// not recognise the CPU takes SSE3's; the environment variable OPENBLAS_CORETYPE names others).
std::string blas_description();

// Threads for our kernels and for BLAS; n <= 0 keeps the default (all cores).
void set_threads(int n);

namespace cpu {
class WordGemm;
}
struct Phase1;

// BLAS + threads. Holds a reference to the index (which must outlive it) and, from the first
// search that needs it, its phase-1 GEMM (CpuOptions::precision).
class CpuSearcher final : public Searcher {
 public:
  // An Error where the CPU lacks what options.precision needs.
  explicit CpuSearcher(const Index& index, const CpuOptions& options = {});
  ~CpuSearcher() override;
  Backend backend() const override { return Backend::cpu; }
  const Index& index() const override { return index_; }
  // The options as resolved: the precision phase 1 runs at here, the tile rows.
  const CpuOptions& options() const { return options_; }
  // For a method walking a collection's segments together (the hybrid): queries [begin, end)
  // as this searcher's top-k would compute them, phase 1 done, where that batch walks (null
  // where it would not). `queries` must outlive it.
  std::unique_ptr<WalkingBatch> walking_batch(const QuerySet& queries, std::size_t begin,
                                              std::size_t end, const SearchOptions& options) const;

 protected:
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  const cpu::WordGemm& word_gemm() const;
  // What the method computes phase 1 with (none for the methods without one).
  std::optional<Phase1> phase1(const SearchOptions& options) const;

  const Index& index_;
  CpuOptions options_;
  mutable std::mutex gemm_mutex_;
  mutable std::shared_ptr<const cpu::WordGemm> gemm_;
};

// One search on the CPU with default tiles (CpuSearcher(index).search(...)).
SearchResults search(const Index& index, const QuerySet& queries, std::size_t k,
                     const SearchOptions& options, SearchStats* stats = nullptr);
void pairwise(const Index& index, const QuerySet& queries, const SearchOptions& options,
              const RowSink& sink, SearchStats* stats = nullptr);

}  // namespace lcrwmd
