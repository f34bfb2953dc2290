// The CUDA backend's driver: the resident set on the device, and per batch of queries the same
// pipeline as the CPU (lc_rwmd.cpp explains the method):
//
//   query words (one packed upload) -> tiles of columns -> cuBLAS SGEMM (vocabulary x tile)
//   -> phase1_epilogue (squared distances staged per row: Z's row minima, square-rooted after
//   the last tile; for the symmetric variants the query-major cache of squared distances and
//   the nearest other words) -> finish_bound_terms (B2, on the device) -> sparse_times_z (D1,
//   or the bound max(D1, B2)) -> top-k on the device (select_k.cu), or rows to the host.
//
// Symmetric top-k refines like the CPU, for the whole batch at once (refine.h): the exact
// D = max(D1, D2) from the cache only for the documents whose bound may still enter the top-k.
// WCD is a direct kernel over the documents' centroids; the quadratic RWMD runs the same
// kernels with each document's own word occurrences as the "vocabulary" (the paper's GPU
// baseline: T1 gathered, one GEMM, row and column minima).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cuda/check.h"
#include "cuda/devices.h"
#include "cuda/gpu_index_impl.h"
#include "cuda/sort_key.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/topk.h"

namespace lcrwmd {

using namespace cuda;

WorkShape GpuIndex::Impl::shape(const SearchOptions& opt, std::size_t k, bool full) const {
  WorkShape w;
  w.pass = implementation(opt.method).gpu;
  w.symmetric = opt.direction == Direction::symmetric && w.pass != GpuPass::centroids;
  w.full_matrix = full || !opt.prune;
  w.vocab = index.vocab_size();
  w.dim = index.dim();
  w.docs = set.largest_chunk();
  w.k = k;
  w.act_reach = act_reach(opt);
  return w;
}

// The pipelines with LC-RWMD's phase 1 against the whole vocabulary.
bool GpuIndex::Impl::linear(GpuPass p) { return p == GpuPass::nearest || p == GpuPass::capped; }

void GpuIndex::Impl::linear_phase1(const QueryBatch& b, Reverse rev, const SearchOptions& opt) {
  const GpuPass pass = implementation(opt.method).gpu;
  if (pass == GpuPass::nearest) phase1(b, rev, rev != Reverse::none, true);
  if (pass == GpuPass::capped) act_phase1(b, rev, opt);
}

// dst[j * n_c + i]: distances (or, for Reverse::bound, bounds) of the batch to chunk c.
void GpuIndex::Impl::block(const QueryBatch& b, const QuerySet& q, Chunk& c,
                           const SearchOptions& opt, Reverse rev, std::size_t gather_bytes,
                           float* dst) {
  switch (implementation(opt.method).gpu) {
    case GpuPass::centroids:
      return wcd_block(b, q, c, dst);
    case GpuPass::quadratic:
      return quadratic_block(b, c, opt.direction == Direction::symmetric, gather_bytes, dst);
    case GpuPass::nearest:
      return lc_rwmd_block(b, c, rev, dst);
    case GpuPass::capped:
      return act_block(b, c, opt, rev, dst);
    case GpuPass::none:
      break;
  }
  throw Error(std::string(to_string(opt.method)) + " does not run on the GPU");  // unreachable
}

// Scratch keeps the capacity of the largest batch that used it, each array its own: after
// batches of other shapes their sum may crowd out the next one. Given back on a failed
// allocation (the batch is then tried once more).
void GpuIndex::Impl::release_scratch() {
  for (DeviceArray<float>* a :
       {&z, &tile, &cache, &nn_sum, &out[0], &out[1], &g_vectors, &g_norms, &q_centroids, &slots})
    a->release();
  nearest.release();
  slot_begin.release();
  gather_indptr.release();
  g_positions.release();
  selector.release();
  refiner.release();
}

template <typename Use>
void GpuIndex::Impl::for_each_batch(const QuerySet& q, const SearchOptions& opt, std::size_t k,
                                    bool full, SearchStats& st, Use&& use) {
  resolve_backend(Backend::cuda, opt);  // wmd, query-to-document: an error naming the CPU
  LCRWMD_CUBLAS_CHECK(cublasSetMathMode(
      blas.get(), options.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  const WorkShape ws = shape(opt, k, full);
  const auto batches = plan_gpu_batches(ws, q.indptr, set.budget, opt.batch, options.tile_words);
  st.backend = Backend::cuda;
  st.device_chunks = set.ranges.size();
  // What phase 1 runs at: LC-RWMD's is certified in the set's precision, the others' float
  // (TF32 is reported as f32: uncertified); WCD has none.
  st.precision = ws.pass == GpuPass::centroids                        ? Precision::automatic
                 : ws.pass == GpuPass::nearest && !options.allow_tf32 ? set.precision
                                                                      : Precision::f32;
  for (const GpuBatch& gb : batches) {
    const QueryBatch b(index, q, gb.begin, gb.end, gb.tile_words, set.precision);
    batch = uploader.upload(b, stream.get());
    const std::size_t fixed = batch_bytes(ws, b.nq, b.positions());
    const std::size_t gather_bytes = set.budget > fixed ? set.budget - fixed : 0;
    try {
      use(b, gather_bytes);
    } catch (const DeviceOutOfMemory&) {
      release_scratch();
      use(b, gather_bytes);
    }
    ++st.batches;
    st.distances += b.nq * index.n_docs();
    if (opt.progress) opt.progress(gb.end, q.size());
  }
}

SearchResults GpuIndex::Impl::search(const QuerySet& q, std::size_t k, const SearchOptions& opt,
                                     SearchStats* stats) {
  std::lock_guard lock(mutex);
  const DeviceGuard on_device(device.id);
  SearchResults res = empty_results(q.size(), std::min(k, index.n_docs()));
  SearchStats st;
  const GpuPass pass = implementation(opt.method).gpu;
  const bool symmetric = opt.direction == Direction::symmetric && pass != GpuPass::centroids;
  const Reverse rev = !linear(pass) || !symmetric ? Reverse::none
                      : opt.prune                 ? Reverse::bound
                                                  : Reverse::full;
  std::vector<std::uint64_t> keys;
  for_each_batch(q, opt, res.k, false, st, [&](const QueryBatch& b, std::size_t gather_bytes) {
    linear_phase1(b, rev, opt);
    std::vector<TopK> best(b.nq, TopK(res.k));
    for (std::size_t ci = 0; ci < set.ranges.size(); ++ci) {
      Chunk& c = set.chunk(ci);
      const std::size_t n = c.docs.size();
      const auto first_doc = static_cast<std::int64_t>(c.docs.begin);
      out[0].reserve(b.nq * n);
      block(b, q, c, opt, rev, gather_bytes, out[0].data());
      if (rev == Reverse::bound) {
        const auto tops =
            refiner.topk(out[0].data(), n, res.k, reverse_args(b, c.csr(), act_reach(opt)),
                         selector, stream.get(), st);
        for (std::size_t j = 0; j < b.nq; ++j)
          for (const Neighbor& nb : tops[j]) best[j].push({nb.distance, first_doc + nb.index});
      } else {
        selector.select(out[0].data(), b.nq, n, n, res.k, keys, stream.get());
        const std::size_t kk = std::min(res.k, n);
        for (std::size_t j = 0; j < b.nq; ++j)
          for (std::size_t r = 0; r < kk; ++r) {
            const std::uint64_t key = keys[j * kk + r];
            best[j].push({key_distance(key), first_doc + key_doc(key)});
          }
        if (rev == Reverse::full) st.refined += b.nq * n;
      }
    }
    for (std::size_t j = 0; j < b.nq; ++j) {
      const std::vector<Neighbor> top = best[j].take_sorted();
      const std::size_t row = (b.begin + j) * res.k;
      for (std::size_t r = 0; r < top.size(); ++r) {
        res.distances[row + r] = top[r].distance;
        res.indices[row + r] = top[r].index;
      }
    }
  });
  if (stats) *stats = st;
  return res;
}

// Full rows, double-buffered: batch t's rows are copied to pinned memory on the copy
// stream while batch t + 1 computes, and handed to the sink while it does.
void GpuIndex::Impl::pairwise(const QuerySet& q, const SearchOptions& opt, const RowSink& sink,
                              SearchStats* stats) {
  std::lock_guard lock(mutex);
  const DeviceGuard on_device(device.id);
  SearchStats st;
  const std::size_t n_all = index.n_docs();
  const GpuPass pass = implementation(opt.method).gpu;
  const bool symmetric = opt.direction == Direction::symmetric && pass != GpuPass::centroids;
  const Reverse rev = linear(pass) && symmetric ? Reverse::full : Reverse::none;
  std::size_t t = 0;
  struct Pending {
    std::size_t first = 0, count = 0;
  } pending[2];
  auto hand_over = [&](std::size_t buf) {
    if (pending[buf].count == 0) return;
    copied[buf].sync();
    sink(pending[buf].first, pending[buf].count, host_rows[buf].data());
    pending[buf].count = 0;
  };
  for_each_batch(q, opt, 0, true, st, [&](const QueryBatch& b, std::size_t gather_bytes) {
    const std::size_t buf = t++ % 2;
    hand_over(buf);  // batch t - 2's rows, if the sink has not had them yet
    host_rows[buf].reserve(b.nq * n_all);
    linear_phase1(b, rev, opt);
    for (std::size_t ci = 0; ci < set.ranges.size(); ++ci) {
      Chunk& c = set.chunk(ci);
      const std::size_t n = c.docs.size();
      out[buf].reserve(b.nq * n);
      copied[buf].wait_on(stream.get());  // the copy of this buffer's last block is done
      block(b, q, c, opt, rev, gather_bytes, out[buf].data());
      computed[buf].record(stream.get());
      computed[buf].wait_on(copy_stream.get());
      LCRWMD_CUDA_CHECK(cudaMemcpy2DAsync(
          host_rows[buf].data() + c.docs.begin, n_all * sizeof(float), out[buf].data(),
          n * sizeof(float), n * sizeof(float), b.nq, cudaMemcpyDeviceToHost, copy_stream.get()));
      copied[buf].record(copy_stream.get());
      if (!set.all_resident) copied[buf].sync();  // the chunk slot is refilled next
    }
    if (rev == Reverse::full) st.refined += b.nq * n_all;
    pending[buf] = {b.begin, b.nq};
    hand_over(1 - buf);  // the previous batch, while this one computes
  });
  // One batch is still pending (the other was handed over during the last one).
  hand_over(0);
  hand_over(1);
  if (stats) *stats = st;
}

GpuIndex::GpuIndex(const Index& index, const GpuOptions& options) {
  const GpuDevice device = cuda::checked_device(options.device);
  const cuda::DeviceGuard on_device(device.id);
  impl_ = std::make_unique<Impl>(index, options, device);
}
GpuIndex::GpuIndex(GpuIndex&&) noexcept = default;
GpuIndex& GpuIndex::operator=(GpuIndex&&) noexcept = default;
GpuIndex::~GpuIndex() {
  if (!impl_) return;
  // Its memory, streams and handles are released on its own device.
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != impl_->device.id &&
                        cudaSetDevice(impl_->device.id) == cudaSuccess;
  impl_.reset();
  if (switched) cudaSetDevice(previous);
}

SearchResults GpuIndex::top_k(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                              SearchStats* stats) const {
  return impl_->search(queries, k, options, stats);
}
void GpuIndex::all_distances(const QuerySet& queries, const SearchOptions& options,
                             const RowSink& sink, SearchStats* stats) const {
  impl_->pairwise(queries, options, sink, stats);
}
const GpuDevice& GpuIndex::device() const { return impl_->device; }
std::size_t GpuIndex::chunks() const { return impl_->set.ranges.size(); }
std::size_t GpuIndex::resident_bytes() const { return impl_->set.resident; }
Precision GpuIndex::precision() const { return impl_->set.precision; }
std::size_t GpuIndex::uploads() const { return impl_->set.uploads(); }
void GpuIndex::set_allow_tf32(bool allow) {
  std::lock_guard lock(impl_->mutex);
  impl_->options.allow_tf32 = allow;
}
const Index& GpuIndex::index() const { return impl_->index; }

}  // namespace lcrwmd
