#pragma once
// The CUDA backend's kernels, behind plain launch functions (every launch is checked). Layouts:
// a phase-1 tile is row-major rows x cols (one vocabulary word, or one gathered document word,
// per row); per-query blocks are query-major (out[j * stride + i]).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cpu/word_bounds.h"
#include "cuda/limits.h"

namespace lcrwmd::cuda {

// Documents of one resident chunk: CSR with offsets starting at 0.
struct DeviceCsr {
  const std::uint64_t* indptr = nullptr;
  const std::uint32_t* indices = nullptr;
  const float* values = nullptr;
  std::size_t docs = 0;
  std::size_t nnz = 0;  // picks the kernels' lanes per document
};

// A batch's query words. Phase-1 columns are the distinct words of each tile's queries; query j
// owns positions [pos[j], pos[j + 1]) of `cols` (the column of each of its words) and
// `weights`.
struct QueryWords {
  const std::uint32_t* cols = nullptr;
  const float* weights = nullptr;
  const std::uint64_t* pos = nullptr;  // n_queries + 1 offsets
  int n_queries = 0;
};

// Phase 1 after the GEMM of one tile: columns [col0, col0 + cols), the words of queries
// [q0, q0 + tile_queries) (all of them, or a part of one long query). tile[r][c] (row stride
// ld) = -2 e_r . t_c gives the estimate |e_r|^2 + |t_c|^2 - 2 e_r . t_c of the squared
// distance, exactly 0 where row and column are the same word. Certified (row_terms set, and
// col_terms; word_terms.h): the squared distance lies in [lo, hi] = [max(0, estimate - beta),
// estimate + beta], and the distances that count are recomputed from the vectors
// (device::exact_sq_dist, one order for every precision). Otherwise the estimate is the
// distance, max(0, estimate), recomputed where the expansion has lost its accuracy. Each row is
// staged in shared memory, then:
//  - z[r * n_queries + j] = min over query j's positions in the tile ([tile_begin[j - q0],
//    tile_end[j - q0])), folded into what its earlier tiles left unless the tile holds its
//    first position, square-rooted where it holds its last; certified, the minimum of the
//    recomputed distances of the positions whose lo is at most the least hi;
//  - where cache is set, cache[r * cache_stride + p] = the squared distance at position p
//    (query-major: D2 of a pair then reads one contiguous segment per document word);
//    certified, its lo;
//  - where nearest is set, nearest[c - col0] = min(nearest, min over rows of another word)
//    (float bits); certified, of lo.
struct Phase1Args {
  const float* tile = nullptr;
  std::size_t rows = 0;
  int cols = 0;
  std::size_t ld = 0;
  int dim = 0;
  const float* row_vectors = nullptr;
  const float* row_norms = nullptr;
  const std::uint32_t* row_word = nullptr;  // null: row r is word r
  const float* col_vectors = nullptr;       // of the tile's columns
  const float* col_norms = nullptr;
  const std::int64_t* col_word = nullptr;         // -1: a word the rows cannot hold
  const cpu::bounds::Terms* row_terms = nullptr;  // certified: per row (null: not certified)
  const cpu::bounds::Terms* col_terms = nullptr;  // certified: of the tile's columns
  int col0 = 0;
  QueryWords q;
  int q0 = 0, tile_queries = 0;
  const int* tile_begin = nullptr;
  const int* tile_end = nullptr;
  float* z = nullptr;
  float* cache = nullptr;
  std::size_t cache_stride = 0;
  unsigned* nearest = nullptr;
};
void phase1_epilogue(const Phase1Args& a, cudaStream_t s);

// Symmetric top-k's bound B2 (lc_rwmd.cpp explains), after the last tile: per query j,
// nn_sum[j] = sum_p F_p sqrt(nearest[cols[p]]) and z[u * n_queries + j] = -F_p sqrt(nearest) at
// the rows u = col_word[cols[p]] of its own words.
void finish_bound_terms(const QueryWords& q, const std::int64_t* col_word, const unsigned* nearest,
                        float* z, float* nn_sum, cudaStream_t s);

void fill(float* p, std::size_t n, float value, cudaStream_t s);

// Phase 2: D1[j][i] = sum_p w_ip z[u_ip][j] for queries [0, n_queries). With split_bound, z
// holds the B2 terms as negative entries (lc_rwmd.cpp explains) and the result is the bound
// max(D1, nn_sum[j] - shared - 1e-4 nn_sum[j]).
void sparse_times_z(const DeviceCsr& docs, const float* z, int n_queries, bool split_bound,
                    const float* nn_sum, float* out, std::size_t stride, cudaStream_t s);

// The other direction from the query-major cache of squared distances (Phase1Args::cache,
// rows as in docs.indices): D2(i, j) = sum over query j's positions p of
// F_p sqrt(min over document i's words u of cache[u * stride][p]). Certified (certified.row_terms
// set; the cache holds lo), that sum over the cache is a lower bound of D2, and D2 itself takes,
// per position, the least recomputed distance of the words whose lo is at most the least hi
// (lo + 2 beta), as phase 1 does. With act_reach > 0, ACT's query -> document direction
// instead (act_kernels.cu): each position's weight F_p goes to the document's words in
// ascending cost, at most a word's weight for act_reach - 1 steps, the rest at the next
// nearest (ICT where act_reach covers the document's words).
struct CertifiedWords {
  const cpu::bounds::Terms* row_terms = nullptr;  // per vocabulary word (null: not certified)
  const float* row_vectors = nullptr;             // the vocabulary's float vectors
  const cpu::bounds::Terms* col_terms = nullptr;  // per batch column
  const float* col_vectors = nullptr;
  const std::int64_t* col_word = nullptr;  // per batch column: its vocabulary word, or -1
  int dim = 0;
};
struct ReverseArgs {
  DeviceCsr docs;
  const float* cache = nullptr;
  std::size_t stride = 0;
  QueryWords q;
  std::uint32_t act_reach = 0;
  CertifiedWords certified;
};
// Listed pairs: out[l] = max(bound[j * bound_stride + doc], D2(doc, j)) for doc = docs[l],
// j = queries[l]: the exact symmetric distance where the bound is max(D1, B2) (or D1). With
// `worst` (certified only): per query the k-th best so far as (distance, document), and a pair
// whose bound max(bound, D2's lower bound) already loses against it, (bound, doc) >= worst,
// gets -1 instead of its distance, D2 not computed.
struct Worst {
  const float* distance = nullptr;
  const std::uint32_t* doc = nullptr;
};
void reverse_pairs(const ReverseArgs& a, const std::uint32_t* docs, const std::uint32_t* queries,
                   std::size_t n_pairs, const float* bound, std::size_t bound_stride, Worst worst,
                   float* out, cudaStream_t s);
// Every document and query: d[j * stride + i] = max(d[j * stride + i], D2(i, j)).
void reverse_all(const ReverseArgs& a, float* d, std::size_t stride, cudaStream_t s);
// Both where a.act_reach > 0 (act_kernels.cu; reverse_pairs and reverse_all hand over).
void act_reverse_pairs(const ReverseArgs& a, const std::uint32_t* docs,
                       const std::uint32_t* queries, std::size_t n_pairs, const float* bound,
                       std::size_t bound_stride, float* out, cudaStream_t s);
void act_reverse_all(const ReverseArgs& a, float* d, std::size_t stride, cudaStream_t s);

// ACT-k and ICT (lc_act.cpp explains the method) after phase 1 has filled the cache of
// squared distances. Per vocabulary word u and query j, the slots
// [slot_begin[j], slot_begin[j + 1]) of row u (slot_stride slots a row, each a (cost, weight)
// pair of floats) hold j's nearest words in ascending cost, as many as a transfer reaches:
// min(k + 1, h_j), or all h_j for ICT. Where that is all of j's words, only the prefix a
// transfer of u's largest document weight (max_weight[u]) can use is ordered, one slot more,
// and the rest repeat its cost at weight 0.
struct ActSlots {
  const float* cache = nullptr;
  std::size_t cache_stride = 0;
  QueryWords q;
  const std::uint32_t* slot_begin = nullptr;  // n_queries + 1
  std::size_t slot_stride = 0;
  const float* max_weight = nullptr;  // per vocabulary word; read where a query keeps all
  float* slots = nullptr;             // vocab x slot_stride x 2
  std::size_t vocab = 0;
};
void act_slots(const ActSlots& a, cudaStream_t s);

// Phase 2 of ACT (document -> query): out[j * stride + i] = sum over document i's words of
// the k-step transfer of its weight through its slots for query j; with keep_larger,
// max(out, that) (symmetric ACT raises LC-RWMD's bound with it).
void act_sparse(const DeviceCsr& docs, const ActSlots& a, bool keep_larger, float* out,
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
