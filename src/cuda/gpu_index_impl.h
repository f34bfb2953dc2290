#pragma once
// GpuIndex's state and its drivers, one file per job: lc_rwmd_driver.cpp (phase 1 and the
// LC-RWMD block), act_driver.cpp (ACT-k and ICT), quadratic_driver.cpp, wcd_driver.cpp, and
// gpu_index.cpp (the batch loop, search and pairwise). CUDA-free declarations of the kernels'
// launchers are in kernels.h.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/plan.h"
#include "cuda/query_batch.h"
#include "cuda/refine.h"
#include "cuda/resident_set.h"
#include "cuda/select_k.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd {

namespace cuda {

enum class Reverse {
  none,   // one-sided: D1
  bound,  // symmetric top-k: max(D1, B2), refined later where it may enter the top-k
  full,   // symmetric, every distance: max(D1, D2)
};

}  // namespace cuda

struct GpuIndex::Impl {
  Impl(const Index& idx, const GpuOptions& opt, const GpuDevice& dev)
      : index(idx), options(opt), device(dev), set(idx, opt, dev, stream.get()) {}

  const Index& index;
  GpuOptions options;
  GpuDevice device;
  std::mutex mutex;  // one stream: searches on one GpuIndex take turns
  cuda::Stream stream, copy_stream;
  cuda::Cublas blas{stream.get()};
  cuda::ResidentSet set;

  // Per-batch scratch, reused.
  cuda::BatchUploader uploader;
  cuda::DeviceBatch batch;
  cuda::DeviceArray<float> z, tile, cache, nn_sum;
  cuda::DeviceArray<unsigned> nearest;
  cuda::DeviceArray<float> out[2];
  cuda::DeviceArray<std::uint64_t> gather_indptr;
  cuda::DeviceArray<float> g_vectors, g_norms, q_centroids;
  cuda::DeviceArray<std::uint32_t> g_positions;
  cuda::PinnedArray<float> host_rows[2];
  cuda::Event computed[2], copied[2];
  cuda::TopKSelector selector;
  cuda::Refiner refiner;
  // ACT and ICT: the batch's slots, their offsets, and the vocabulary's largest document
  // weights (uploaded on first use, then kept).
  cuda::DeviceArray<float> slots, max_weight;
  cuda::DeviceArray<std::uint32_t> slot_begin;
  std::vector<std::uint32_t> host_slot_begin;

  // Whether the batch's phase 1 was certified (the cache then holds lower bounds).
  bool certified = false;

  // lc_rwmd_driver.cpp
  // Certified rows: their shares of the bound and, for bf16, their rounded copy (null terms:
  // not certified).
  struct CertifiedRows {
    const cpu::bounds::Terms* terms = nullptr;
    const std::uint16_t* bf16 = nullptr;
  };
  void phase1_rows(const cuda::QueryBatch& b, const float* row_vectors, const float* row_norms,
                   const std::uint32_t* row_word, std::size_t rows, CertifiedRows bounded,
                   float* cache_out, unsigned* nearest_out);
  void phase1(const cuda::QueryBatch& b, cuda::Reverse rev, bool cache_distances, bool certify);
  // act_reach: 0 for RWMD's D2, else ACT's (act_reach(options)).
  cuda::ReverseArgs reverse_args(const cuda::QueryBatch& b, const cuda::DeviceCsr& docs,
                                 std::uint32_t act_reach) const;
  void lc_rwmd_block(const cuda::QueryBatch& b, const cuda::Chunk& c, cuda::Reverse rev,
                     float* dst);
  // act_driver.cpp
  void act_phase1(const cuda::QueryBatch& b, cuda::Reverse rev, const SearchOptions& opt);
  cuda::ActSlots act_slots_args(const cuda::QueryBatch& b) const;
  void act_block(const cuda::QueryBatch& b, const cuda::Chunk& c, const SearchOptions& opt,
                 cuda::Reverse rev, float* dst);
  // quadratic_driver.cpp
  void quadratic_block(const cuda::QueryBatch& b, const cuda::Chunk& c, bool symmetric,
                       std::size_t gather_bytes, float* dst);
  // wcd_driver.cpp
  void wcd_block(const cuda::QueryBatch& b, const QuerySet& q, cuda::Chunk& c, float* dst);
  // gpu_index.cpp
  static bool linear(GpuPass p);
  void linear_phase1(const cuda::QueryBatch& b, cuda::Reverse rev, const SearchOptions& opt);
  cuda::WorkShape shape(const SearchOptions& opt, std::size_t k, bool full) const;
  void block(const cuda::QueryBatch& b, const QuerySet& q, cuda::Chunk& c, const SearchOptions& opt,
             cuda::Reverse rev, std::size_t gather_bytes, float* dst);
  void release_scratch();
  template <typename Use>
  void for_each_batch(const QuerySet& q, const SearchOptions& opt, std::size_t k, bool full,
                      SearchStats& st, Use&& use);
  SearchResults search(const QuerySet& q, std::size_t k, const SearchOptions& opt,
                       SearchStats* stats);
  void pairwise(const QuerySet& q, const SearchOptions& opt, const RowSink& sink,
                SearchStats* stats);
};

}  // namespace lcrwmd
