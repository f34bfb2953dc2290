#pragma once
// The CUDA backend: a Searcher whose resident set stays in GPU memory across searches.
//
//   GpuIndex gpu(index, {});                      // uploads CSR + compacted vectors once
//   SearchResults r = gpu.search(queries, 10, {});
//   gpu.uploads();                                // still 1: searches upload queries only
//
// make_searcher (lcrwmd/searcher.h) picks it where a device is present. This header is free
// of CUDA: a build without the toolkit still compiles against it, reports no devices, and a
// GpuIndex then throws lcrwmd::Error.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lcrwmd/index.h"
#include "lcrwmd/precision.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

struct GpuDevice {
  int id = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t total_bytes = 0, free_bytes = 0;
};

// Whether this build has the CUDA backend.
bool built_with_cuda();
// How many devices are usable: 0 without CUDA, a driver or a GPU. Creates no CUDA context,
// so it is cheap enough to decide a backend with.
std::size_t gpu_device_count();
// Device `id` (0 <= id < gpu_device_count()), with its free memory: this makes its context.
GpuDevice gpu_device(int id);
// Every usable device (a context on each): for listings.
std::vector<GpuDevice> gpu_devices();
// What LC-RWMD's phase 1 runs `p` as on `device` (GpuOptions::precision): f32 or bf16; an
// Error where the device cannot (bf16 before compute capability 8.0; int8 anywhere).
Precision gpu_precision(const GpuDevice& device, Precision p = Precision::automatic);

// Where the CUDA backend puts its work.
struct GpuOptions {
  int device = 0;
  // Bytes of device memory the batches may use beyond the resident set (0: most of what is
  // free).
  std::size_t memory_budget = 0;
  // Documents per resident chunk (0: as many as fit; a set too large for the device is
  // processed in chunks that every search uploads in turn).
  std::size_t chunk_docs = 0;
  // Caps the query words of one phase-1 GEMM (0: as many as memory allows; tests force tiny
  // tiles).
  std::size_t tile_words = 0;
  // Phase 1's GEMM for LC-RWMD: f32 (cuBLAS SGEMM) or bf16 (tensor cores, compute capability
  // 8.0 and later), certified as on the CPU (lcrwmd/precision.h): both give the same bits.
  // automatic: bf16 where the device has it. int8 is CPU-only (an error here).
  Precision precision = Precision::automatic;
  // Every method's phase-1 GEMM on TF32 tensor cores, uncertified: distances to ~1e-3
  // relative. Overrides `precision`. (ACT, ICT and the quadratic RWMD are not certified: their
  // GEMM is f32 otherwise.)
  bool allow_tf32 = false;
};

// Methods: wcd, rwmd (quadratic, the paper's GPU baseline: the documents' word vectors
// gathered per chunk, one GEMM, row and column minima), lc-rwmd, act and ict; wmd is CPU-only
// (an error here; make_searcher's automatic backend sends it to the CPU).
class GpuIndex final : public Searcher {
 public:
  // Uploads the resident set to options.device. Where it does not fit beside the working
  // memory, the documents are split into chunks that each search uploads in turn (stderr
  // says so once). The index must outlive the GpuIndex.
  GpuIndex(const Index& index, const GpuOptions& options = {});
  GpuIndex(GpuIndex&&) noexcept;
  GpuIndex& operator=(GpuIndex&&) noexcept;
  ~GpuIndex() override;

  Backend backend() const override { return Backend::cuda; }
  const Index& index() const override;

  const GpuDevice& device() const;
  std::size_t chunks() const;          // resident chunks (1: the whole set stays on the GPU)
  std::size_t resident_bytes() const;  // device memory held by the resident set
  // LC-RWMD's phase-1 precision, GpuOptions::precision as this device runs it (f32 or bf16).
  Precision precision() const;
  // Uploads of document chunks to the device so far: the resident set's at construction, and
  // every search's where the set does not fit (and is processed in chunks).
  std::size_t uploads() const;
  // The precision of the searches from now on (GpuOptions::allow_tf32); waits for a search
  // under way.
  void set_allow_tf32(bool allow);

 protected:
  void all_distances(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                     SearchStats* stats) const override;
  SearchResults top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                      SearchStats* stats) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lcrwmd
