// ACT-k and ICT on the device: LC-RWMD's phase 1 with the cache of squared distances, from
// which each vocabulary word's slots are chosen (act_kernels.cu), then per chunk the k-step
// sparse pass. Symmetric top-k bounds with max(LC-RWMD's bound, ACT's D1) and refines with
// ACT's query -> document direction from the same cache (Refiner, reverse_pairs).
#include <algorithm>

#include "cuda/gpu_index_impl.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

using namespace cuda;

ActSlots GpuIndex::Impl::act_slots_args(const QueryBatch& b) const {
  ActSlots a;
  a.cache = cache.data();
  a.cache_stride = b.positions();
  a.q = batch.q;
  a.slot_begin = slot_begin.data();
  a.slot_stride = host_slot_begin.back();
  a.max_weight = max_weight.data();
  a.slots = slots.data();
  a.vocab = index.vocab_size();
  return a;
}

void GpuIndex::Impl::act_phase1(const QueryBatch& b, Reverse rev, const SearchOptions& opt) {
  const cudaStream_t s = stream.get();
  phase1(b, rev, true, false);
  const std::uint32_t reach = act_reach(opt);
  host_slot_begin.assign(1, 0);
  bool keeps_all = false;
  for (std::size_t j = 0; j < b.nq; ++j) {
    const auto h = static_cast<std::uint32_t>(b.pos[j + 1] - b.pos[j]);
    keeps_all |= reach >= h;
    host_slot_begin.push_back(host_slot_begin.back() + std::min(h, reach));
  }
  slot_begin.upload(host_slot_begin.data(), host_slot_begin.size(), s);
  const std::size_t v = index.vocab_size();
  if (keeps_all && max_weight.bytes() == 0) {  // once: release_scratch() keeps it
    const std::vector<float> largest = largest_word_weights(index);
    max_weight.upload(largest.data(), v, s);
    stream.sync();  // `largest` goes out of scope
  }
  slots.reserve(2 * v * host_slot_begin.back());
  act_slots(act_slots_args(b), s);
}

void GpuIndex::Impl::act_block(const QueryBatch& b, const Chunk& c, const SearchOptions& opt,
                               Reverse rev, float* dst) {
  const cudaStream_t s = stream.get();
  const std::size_t n = c.docs.size();
  const ActSlots a = act_slots_args(b);
  if (rev == Reverse::bound) {
    lc_rwmd_block(b, c, rev, dst);
    act_sparse(c.csr(), a, true, dst, n, s);
    return;
  }
  act_sparse(c.csr(), a, false, dst, n, s);
  if (rev == Reverse::full) reverse_all(reverse_args(b, c.csr(), act_reach(opt)), dst, n, s);
}

}  // namespace lcrwmd
