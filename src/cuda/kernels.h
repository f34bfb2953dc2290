#pragma once
// The CUDA backend's kernels, behind plain launch functions (every launch is checked). Layouts:
// a phase-1 tile is row-major rows x cols (one vocabulary word, or one gathered document word,
// per row); per-query blocks are query-major (out[j * stride + i]).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace lcrwmd::cuda {

// Documents of one resident chunk: CSR with offsets starting at 0.
struct DeviceCsr {
  const std::uint64_t* indptr = nullptr;
  const std::uint32_t* indices = nullptr;
  const float* values = nullptr;
  std::size_t docs = 0;
};

// Query words of a batch as tile columns: query j owns positions [begin[j], end[j]) of `cols`
// (global column numbers, ascending) and `weights`; a launch covers columns [col0, col0 + n).
struct QueryColumns {
  const std::uint32_t* cols = nullptr;
  const float* weights = nullptr;
  const int* begin = nullptr;  // restricted to the launch's columns
  const int* end = nullptr;
  int n_queries = 0;
  int col0 = 0;
};

// Phase 1 after the GEMM: tile[r][c] = -2 e_r . t_c becomes the squared distance
// max(0, |e_r|^2 + |t_c|^2 - 2 e_r . t_c), recomputed from the vectors where the expansion has
// lost its accuracy and exactly 0 where row and column are the same word. Then, where z is
// set, z[r * n_queries + j] = min(z, min over query j's columns in the tile), and where
// nearest is set, nearest[c] = min(nearest[c], min over rows of another word) (float bits).
struct Phase1Args {
  float* tile = nullptr;
  std::size_t rows = 0;
  int cols = 0;
  int dim = 0;
  const float* row_vectors = nullptr;
  const float* row_norms = nullptr;
  const std::uint32_t* row_word = nullptr;  // null: row r is word r
  const float* col_vectors = nullptr;       // of the tile's columns
  const float* col_norms = nullptr;
  const std::int64_t* col_word = nullptr;  // -1: a word the rows cannot hold
  float* z = nullptr;
  QueryColumns q;  // one query: every column of the tile is its own
  unsigned* nearest = nullptr;
  // Whether the squared distances stay in the tile (for D2, or for Z of several queries);
  // one-sided single queries need only their minima.
  bool keep = true;
};
void phase1_epilogue(const Phase1Args& a, cudaStream_t s);

void fill(float* p, std::size_t n, float value, cudaStream_t s);
void sqrt_inplace(float* p, std::size_t n, cudaStream_t s);
void max_inplace(float* a, const float* b, std::size_t n, cudaStream_t s);
// d2[l] = max(d2[l], bound[list[l]]): the exact symmetric distance of listed documents.
void gather_max(const float* bound, const std::uint32_t* list, std::size_t n, float* d2,
                cudaStream_t s);
void scatter(float* dst, const std::uint64_t* positions, const float* values, std::size_t n,
             cudaStream_t s);

// Phase 2: D1[j][i] = sum_p w_ip z[u_ip][j] for queries [0, n_queries). With split_bound, z
// holds the B2 terms as negative entries (lc_rwmd.cpp explains) and the result is the bound
// max(D1, nn_sum[j] - shared - 1e-4 nn_sum[j]).
void sparse_times_z(const DeviceCsr& docs, const float* z, int n_queries, bool split_bound,
                    const float* nn_sum, float* out, std::size_t stride, cudaStream_t s);

// The other direction, one tile of columns at a time: for the listed documents (all where
// list is null), out[j][l] += sum over query j's columns t in the tile of
// F_j[t] * sqrt(min over the document's words u of tile[u][t]).
void reverse_gather(const DeviceCsr& docs, const std::uint32_t* list, std::size_t n_list,
                    const float* tile, int cols, const QueryColumns& q, float* out,
                    std::size_t stride, cudaStream_t s);

// Weighted centroids (accumulated in double, as on the CPU) and WCD to query centroids.
void centroids(const DeviceCsr& docs, const float* vectors, int dim, float* out, cudaStream_t s);
void wcd_distances(const float* doc_centroids, std::size_t n, const float* query_centroids,
                   int n_queries, int dim, float* out, std::size_t stride, cudaStream_t s);

// Quadratic RWMD: the vectors and norms of the listed words, one row each, and row numbers
// 0..count-1 (the CSR indices of a chunk whose "vocabulary" is its own word occurrences).
void gather_rows(const float* vectors, const float* norms, int dim, const std::uint32_t* words,
                 std::size_t count, float* out_vectors, float* out_norms,
                 std::uint32_t* out_positions, cudaStream_t s);

}  // namespace lcrwmd::cuda
