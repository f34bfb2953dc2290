// ACT-k and ICT on the device (lc_act.cpp explains the method): the slots of each vocabulary
// word's nearest query words, the k-step transfers of the sparse pass, and the query ->
// document direction per pair. Each "next nearest word" is a minimum over 64-bit keys (the
// squared distance's bits, which order like the non-negative floats they are, above the
// word's position): strictly after the last key taken, so equal costs are taken one by one
// in position order and nothing has to be sorted or stored.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/device_helpers.cuh"
#include "cuda/kernels.h"
#include "cuda/reverse_kernels.cuh"

namespace lcrwmd::cuda {
namespace {

using namespace device;

constexpr std::uint64_t kNoKey = ~std::uint64_t{0};

__device__ std::uint64_t cost_key(float sq_distance, std::uint32_t position) {
  return (std::uint64_t{__float_as_uint(sq_distance)} << 32) | position;
}
__device__ float key_cost(std::uint64_t key) {
  return sqrtf(__uint_as_float(static_cast<std::uint32_t>(key >> 32)));
}
__device__ std::uint32_t key_position(std::uint64_t key) { return static_cast<std::uint32_t>(key); }
__device__ std::uint64_t warp_min_key(std::uint64_t key) {
  for (int o = 16; o > 0; o /= 2) {
    const std::uint64_t other = __shfl_xor_sync(kFull, key, o);
    key = other < key ? other : key;
  }
  return key;
}

// A warp per (vocabulary word, query): the query's words in ascending cost into the slots,
// one warp-wide minimum per slot.
__global__ void act_slots_kernel(ActSlots a) {
  const int lane = threadIdx.x & 31;
  const auto nq = static_cast<std::size_t>(a.q.n_queries);
  for (std::size_t t = warp_id_global(); t < a.vocab * nq; t += warps_in_grid()) {
    const std::size_t u = t / nq;
    const int j = static_cast<int>(t % nq);
    const std::uint64_t b = a.q.pos[j], e = a.q.pos[j + 1];
    const std::uint32_t s0 = a.slot_begin[j], reach = a.slot_begin[j + 1] - s0;
    const bool keeps_all = reach == e - b;
    const float largest = keeps_all ? a.max_weight[u] : 0.0f;
    const float* row = a.cache + u * a.cache_stride;
    float* seg = a.slots + 2 * (u * a.slot_stride + s0);
    std::uint64_t after = 0;  // keys below it are taken
    float held = 0, last = 0;
    std::uint32_t s = 0;
    while (s < reach) {
      std::uint64_t best = kNoKey;
      for (std::uint64_t p = b + lane; p < e; p += 32) {
        const std::uint64_t key = cost_key(row[p], static_cast<std::uint32_t>(p - b));
        if (key >= after && key < best) best = key;
      }
      best = warp_min_key(best);
      last = key_cost(best);
      const float mass = a.q.weights[b + key_position(best)];
      if (lane == 0) {
        seg[2 * s] = last;
        seg[2 * s + 1] = mass;
      }
      after = best + 1;
      ++s;
      if (keeps_all) {
        // The prefix whose weights hold u's largest document weight, then one slot for what
        // rounding leaves of it.
        const bool done = held >= largest;
        held += mass;
        if (done) break;
      }
    }
    for (std::uint32_t r = s + lane; r < reach; r += 32) {
      seg[2 * r] = last;
      seg[2 * r + 1] = 0.0f;
    }
  }
}

// What weight p of one word costs through its slots: capped steps while more than one is
// left, the rest at the last (as LcAct::transfer).
__device__ float transfer(float p, const float* seg, std::uint32_t reach) {
  if (reach == 0) return 0.0f;  // a query without words
  float total = 0, left = p;
  std::uint32_t s = 0;
  for (; s + 1 < reach && left > 0; ++s) {
    const float moved = fminf(left, seg[2 * s + 1]);
    total += moved * seg[2 * s];
    left -= moved;
  }
  return left > 0 ? total + left * seg[2 * s] : total;
}

__device__ void store(float* o, float d, bool keep_larger) { *o = keep_larger ? fmaxf(*o, d) : d; }

// One query: a warp per document, lanes over its words.
__global__ void act_one_kernel(DeviceCsr x, ActSlots a, bool keep_larger, float* out) {
  const int lane = threadIdx.x & 31;
  const std::uint32_t reach = a.slot_begin[1];
  for (std::size_t i = warp_id_global(); i < x.docs; i += warps_in_grid()) {
    float acc = 0;
    for (std::uint64_t p = x.indptr[i] + lane; p < x.indptr[i + 1]; p += 32)
      acc += transfer(x.values[p], a.slots + 2 * std::size_t{x.indices[p]} * a.slot_stride, reach);
    acc = warp_sum(acc);
    if (lane == 0) store(out + i, acc, keep_larger);
  }
}

// Many queries: a block per 32 documents x 32 queries (docs_by_queries), as LC-RWMD's
// sparse pass; a word's slots for consecutive queries lie side by side.
__global__ void act_many_kernel(DeviceCsr x, ActSlots a, bool keep_larger, float* out,
                                std::size_t stride) {
  docs_by_queries(
      x.docs, a.q.n_queries,
      [&](std::size_t i, int j) {
        const std::uint32_t s0 = a.slot_begin[j], reach = a.slot_begin[j + 1] - s0;
        float acc = 0;
        for (std::uint64_t p = x.indptr[i]; p < x.indptr[i + 1]; ++p)
          acc += transfer(x.values[p],
                          a.slots + 2 * (std::size_t{x.indices[p]} * a.slot_stride + s0), reach);
        return acc;
      },
      [&](int j, std::size_t i, float d) {
        store(out + static_cast<std::size_t>(j) * stride + i, d, keep_larger);
      });
}

// ACT's query -> document direction of (document, query j) by one block: a thread per query
// position, each choosing the document's words in ascending cost (a column of the cache per
// step, read coalesced across the threads). Block-uniform: every thread calls it; thread 0
// gets the result.
__device__ float act_reverse_distance(const ReverseArgs& a, std::size_t doc, int j) {
  __shared__ float warp_totals[kWarps];
  const std::uint64_t w0 = a.docs.indptr[doc], w1 = a.docs.indptr[doc + 1];
  const auto dh = static_cast<std::uint32_t>(w1 - w0);
  const std::uint32_t reach = dh < a.act_reach ? dh : a.act_reach;
  float total = 0;
  for (std::uint64_t p = a.q.pos[j] + threadIdx.x; dh > 0 && p < a.q.pos[j + 1]; p += blockDim.x) {
    float left = a.q.weights[p];
    std::uint64_t after = 0;
    for (std::uint32_t s = 0; left > 0; ++s) {
      std::uint64_t best = kNoKey;
      for (std::uint64_t w = w0; w < w1; ++w) {
        const std::uint64_t key = cost_key(a.cache[std::size_t{a.docs.indices[w]} * a.stride + p],
                                           static_cast<std::uint32_t>(w - w0));
        if (key >= after && key < best) best = key;
      }
      const float cost = key_cost(best);
      if (s + 1 == reach) {
        total += left * cost;
        break;
      }
      const float moved = fminf(left, a.docs.values[w0 + key_position(best)]);
      total += moved * cost;
      left -= moved;
      after = best + 1;
    }
  }
  total = warp_sum(total);
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x >> 5] = total;
  __syncthreads();
  float sum = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kWarps; ++w) sum += warp_totals[w];
  __syncthreads();  // warp_totals is refilled by the block's next pair
  return sum;
}

struct ActReverse {
  __device__ float operator()(const ReverseArgs& a, std::size_t doc, int j) const {
    return act_reverse_distance(a, doc, j);
  }
};

}  // namespace

void act_slots(const ActSlots& a, cudaStream_t s) {
  if (a.vocab == 0 || a.q.n_queries == 0) return;
  act_slots_kernel<<<blocks_for(a.vocab * static_cast<std::size_t>(a.q.n_queries), kWarps),
                     kThreads, 0, s>>>(a);
  LCRWMD_LAUNCH_CHECK();
}

void act_sparse(const DeviceCsr& docs, const ActSlots& a, bool keep_larger, float* out,
                std::size_t stride, cudaStream_t s) {
  if (docs.docs == 0 || a.q.n_queries == 0) return;
  if (a.q.n_queries == 1) {
    act_one_kernel<<<blocks_for(docs.docs, kWarps), kThreads, 0, s>>>(docs, a, keep_larger, out);
  } else {
    const dim3 grid(static_cast<unsigned>((docs.docs + 31) / 32),
                    static_cast<unsigned>((a.q.n_queries + 31) / 32));
    act_many_kernel<<<grid, kThreads, 0, s>>>(docs, a, keep_larger, out, stride);
  }
  LCRWMD_LAUNCH_CHECK();
}

void act_reverse_pairs(const ReverseArgs& a, const std::uint32_t* docs,
                       const std::uint32_t* queries, std::size_t n_pairs, const float* bound,
                       std::size_t bound_stride, float* out, cudaStream_t s) {
  launch_reverse_pairs<ActReverse>(a, docs, queries, n_pairs, bound, bound_stride, out, s);
}

void act_reverse_all(const ReverseArgs& a, float* d, std::size_t stride, cudaStream_t s) {
  launch_reverse_all<ActReverse>(a, d, stride, s);
}

}  // namespace lcrwmd::cuda
