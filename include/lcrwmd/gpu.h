#pragma once
// The CUDA backend: the resident set kept in GPU memory across searches.
//
//   GpuIndex gpu(index, {});                      // uploads CSR + compacted vectors once
//   SearchResults r = gpu.search(queries, 10, {});
//
// lcrwmd::search() with SearchOptions::backend = cuda does the same for one call. This header
// is free of CUDA: a build without the toolkit still compiles against it, reports no devices,
// and a GpuIndex then throws lcrwmd::Error.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lcrwmd/index.h"
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
// The backend `b` resolves to for `method`: automatic becomes cuda where a device is present
// and the method runs there (wcd, rwmd, lc-rwmd), else cpu.
Backend resolve_backend(Backend b, Method method);

// Methods: wcd, rwmd (quadratic, the paper's GPU baseline: the documents' word vectors
// gathered per chunk, one GEMM, row and column minima) and lc-rwmd; wmd is CPU-only.
class GpuIndex {
 public:
  // Uploads the resident set to options.device. Where it does not fit beside the working
  // memory, the documents are split into chunks that each search uploads in turn (stderr
  // says so once); options.device_chunk_docs forces a chunk size.
  GpuIndex(const Index& index, const SearchOptions& options);
  GpuIndex(GpuIndex&&) noexcept;
  GpuIndex& operator=(GpuIndex&&) noexcept;
  ~GpuIndex();

  // As lcrwmd::search and lcrwmd::pairwise; method, symmetric, batch, tile_words, allow_tf32
  // and progress come from `options` (device, budget and chunks from the constructor's).
  SearchResults search(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                       SearchStats* stats = nullptr) const;
  void pairwise(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                SearchStats* stats = nullptr) const;

  const GpuDevice& device() const;
  std::size_t chunks() const;          // resident chunks (1: the whole set stays on the GPU)
  std::size_t resident_bytes() const;  // device memory held by the resident set

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lcrwmd
