#pragma once
// How the CUDA backend splits its work to fit device memory: the resident set into chunks of
// documents, the queries into batches, each batch's query words into phase-1 tiles. Plain C++
// (no CUDA), so the planning is unit-tested on any machine.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lcrwmd/search.h"
#include "methods/method_impl.h"

namespace lcrwmd::cuda {

struct DocRange {
  std::size_t begin, end;
  std::size_t size() const { return end - begin; }
};

// Device bytes of the CSR rows of documents [begin, end): offsets, word ids, weights.
std::size_t csr_bytes(std::span<const std::uint64_t> indptr, std::size_t begin, std::size_t end);

// Contiguous chunks of documents, each at most `max_bytes` of CSR (csr_bytes) and, where
// max_docs > 0, at most max_docs documents; never more than 2^32 - 1 documents (chunk-local
// ids are 32-bit). Throws where a single document does not fit.
std::vector<DocRange> plan_doc_chunks(std::span<const std::uint64_t> indptr, std::size_t max_bytes,
                                      std::size_t max_docs);

// ACT-k and ICT (GpuPass::capped): the most of a query's words one transfer reaches (k + 1;
// ICT: all, written as the largest value); 0 for the other methods.
std::uint32_t act_reach(const SearchOptions& opt);

// What one batch's working memory depends on.
struct WorkShape {
  GpuPass pass = GpuPass::nearest;  // the method's (MethodImpl::gpu)
  bool symmetric = true;
  bool full_matrix = false;  // pairwise: every distance comes back, none is pruned
  std::size_t vocab = 0, dim = 0;
  std::size_t docs = 0;  // documents of the largest resident chunk
  std::size_t k = 0;
  std::uint32_t act_reach = 0;  // act_reach(options)
};

// Device bytes of a batch of `queries` queries with `words` query words in all, without the
// phase-1 tile.
std::size_t batch_bytes(const WorkShape& s, std::size_t queries, std::size_t words);

struct GpuBatch {
  std::size_t begin, end;  // queries
  std::size_t tile_words;  // query words per phase-1 GEMM (all vocabulary rows)
};

// Batches of consecutive queries: at most max_batch (1 for the quadratic RWMD, which works per
// query), their batch_bytes within half the budget, the phase-1 tile (vocab x tile_words
// floats) in what is left; max_tile_words > 0 caps the tile (tests force tiny tiles). Throws a
// clear error where one query with a one-word tile does not fit.
std::vector<GpuBatch> plan_gpu_batches(const WorkShape& s,
                                       std::span<const std::uint64_t> query_indptr,
                                       std::size_t budget, std::size_t max_batch,
                                       std::size_t max_tile_words);

// Quadratic RWMD: documents per sub-chunk whose gathered word vectors (and their distances to
// `words` query words) fit in `bytes`; the sub-chunks of [begin, end) in order.
std::vector<DocRange> plan_gather_chunks(std::span<const std::uint64_t> indptr, DocRange docs,
                                         std::size_t dim, std::size_t words, std::size_t bytes);

}  // namespace lcrwmd::cuda
