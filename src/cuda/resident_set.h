#pragma once
// The resident set on the device: the compacted vocabulary's vectors and norms, and the
// documents' CSR in chunks (all of them kept, or one slot the chunks take turns in where they
// do not fit beside the working memory), with the working-memory budget that placement left.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/plan.h"
#include "cuda/word_terms.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"

namespace lcrwmd::cuda {

// One resident chunk of documents on the device (offsets rebased to 0).
struct Chunk {
  DocRange docs{0, 0};
  std::uint64_t first_nnz = 0, nnz = 0;
  DeviceArray<std::uint64_t> indptr;
  DeviceArray<std::uint32_t> indices;
  DeviceArray<float> values;
  DeviceArray<float> centroids;  // WCD, computed on first use
  bool has_centroids = false;

  DeviceCsr csr() const { return {indptr.data(), indices.data(), values.data(), docs.size(), nnz}; }

  void upload(const Index& index, DocRange r, cudaStream_t s) {
    docs = r;
    has_centroids = false;
    const auto ip = index.indptr();
    first_nnz = ip[r.begin];
    std::vector<std::uint64_t> rebased(r.size() + 1);
    for (std::size_t i = 0; i <= r.size(); ++i) rebased[i] = ip[r.begin + i] - first_nnz;
    nnz = rebased.back();
    indptr.upload(rebased.data(), rebased.size(), s);
    indices.upload(index.indices().data() + first_nnz, nnz, s);
    values.upload(index.values().data() + first_nnz, nnz, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` goes out of scope
  }
};

class ResidentSet {
 public:
  // Uploads the vocabulary and, where they fit, every chunk (stderr says so where not).
  ResidentSet(const Index& index, const GpuOptions& options, const GpuDevice& device,
              cudaStream_t s);

  // Chunk c on the device: resident, or uploaded into the slot now.
  Chunk& chunk(std::size_t c);
  std::size_t largest_chunk() const;
  std::size_t uploads() const { return uploads_; }

  DeviceArray<float> vectors, norms;  // the vocabulary
  // Phase 1's precision (word_terms.h), the vocabulary's shares of its error bound, and for
  // bf16 the vocabulary rounded (bf16_stride(dim) a row).
  Precision precision = Precision::f32;
  DeviceArray<cpu::bounds::Terms> terms;
  DeviceArray<std::uint16_t> bf16;
  std::size_t budget = 0;        // working bytes per batch
  std::vector<DocRange> ranges;  // the chunks' documents
  bool all_resident = true;
  std::size_t resident = 0;  // device bytes held

 private:
  void upload(Chunk& c, DocRange r);

  const Index& index_;
  cudaStream_t stream_;
  std::vector<Chunk> chunks_;
  std::size_t uploads_ = 0;  // chunks sent to the device
};

}  // namespace lcrwmd::cuda
