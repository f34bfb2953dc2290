// The quadratic RWMD on the device (the paper's GPU baseline).
#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/gemm.h"
#include "cuda/gpu_index_impl.h"

namespace lcrwmd {

using namespace cuda;

// Quadratic RWMD of one query (a batch of one) against the chunk: the documents' word
// vectors gathered sub-chunk by sub-chunk, then the LC-RWMD kernels on them.
void GpuIndex::Impl::quadratic_block(const QueryBatch& b, const Chunk& c, bool symmetric,
                                     std::size_t gather_bytes, float* dst) {
  const cudaStream_t s = stream.get();
  const std::size_t m = index.dim(), n = c.docs.size(), positions = b.positions();
  const auto ip = index.indptr();
  const std::size_t tile_cols = b.widest_span();
  const std::vector<DocRange> parts =
      plan_gather_chunks(ip, c.docs, m, tile_cols + (symmetric ? positions : 0), gather_bytes);
  std::vector<std::uint64_t> rebased;
  for (const DocRange& part : parts) {
    const std::uint64_t p0 = ip[part.begin], rows = ip[part.end] - p0;
    const std::uint64_t offset = p0 - c.first_nnz;
    const std::uint32_t* words_of_rows = c.indices.data() + offset;
    g_vectors.reserve(rows * m);
    g_norms.reserve(rows);
    g_positions.reserve(rows);
    gather_rows(set.vectors.data(), set.norms.data(), static_cast<int>(m), words_of_rows, rows,
                g_vectors.data(), g_norms.data(), g_positions.data(), s);
    rebased.resize(part.size() + 1);
    for (std::size_t i = 0; i <= part.size(); ++i) rebased[i] = ip[part.begin + i] - p0;
    gather_indptr.upload(rebased.data(), rebased.size(), s);
    const DeviceCsr occurrences{gather_indptr.data(), g_positions.data(), c.values.data() + offset,
                                part.size(), rows};
    z.reserve(rows);
    if (symmetric) cache.reserve(rows * positions);
    certified = false;  // the gathered rows have no terms
    phase1_rows(b, g_vectors.data(), g_norms.data(), words_of_rows, rows, {},
                symmetric ? cache.data() : nullptr, nullptr);
    float* at = dst + (part.begin - c.docs.begin);
    sparse_times_z(occurrences, z.data(), 1, false, nullptr, at, n, s);
    if (symmetric) reverse_all(reverse_args(b, occurrences, 0), at, n, s);
    LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rebased` and the scratch are reused
  }
}

}  // namespace lcrwmd
