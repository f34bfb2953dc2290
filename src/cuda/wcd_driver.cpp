// WCD on the device: documents' centroids (computed once per chunk) against the queries'.
#include <cuda_runtime_api.h>

#include <vector>

#include "cpu/distance_kernels.h"
#include "cuda/gpu_index_impl.h"

namespace lcrwmd {

using namespace cuda;

void GpuIndex::Impl::wcd_block(const QueryBatch& b, const QuerySet& q, Chunk& c, float* dst) {
  const cudaStream_t s = stream.get();
  const std::size_t m = index.dim(), n = c.docs.size();
  if (!c.has_centroids) {
    c.centroids.reserve(n * m);
    centroids(c.csr(), set.vectors.data(), static_cast<int>(m), c.centroids.data(), s);
    c.has_centroids = true;
  }
  std::vector<float> qc(b.nq * m);
  std::vector<double> acc(m);
  for (std::size_t j = 0; j < b.nq; ++j) {
    const std::size_t qi = b.begin + j, p = q.indptr[qi];
    cpu::weighted_centroid(
        q.words.data() + p, q.weights.data() + p, q.length(qi),
        [&](std::uint32_t u) { return query_word_vector(index, q, u); }, m, acc.data(),
        qc.data() + j * m);
  }
  q_centroids.upload(qc.data(), qc.size(), s);
  wcd_distances(c.centroids.data(), n, q_centroids.data(), static_cast<int>(b.nq),
                static_cast<int>(m), dst, n, s);
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // qc goes out of scope
}

}  // namespace lcrwmd
