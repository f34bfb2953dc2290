#include "cuda/resident_set.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "cuda/check.h"
#include "lcrwmd/error.h"

namespace lcrwmd::cuda {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Device memory left to the CUDA context, cuBLAS's workspace and allocation granularity.
constexpr std::size_t kMargin = 512 * kMiB;

}  // namespace

ResidentSet::ResidentSet(const Index& idx, const GpuOptions& opt, const GpuDevice& device,
                         cudaStream_t s)
    : index_(idx), stream_(s) {
  const Index& index = index_;
  const std::size_t v = index.vocab_size(), m = index.dim();
  vectors.upload(index.vectors(), v * m, s);
  norms.upload(index.sq_norms(), v, s);
  precision = gpu_precision(device, opt.precision);
  const RoundedWords rounded =
      round_words(precision, Side::rows, index.vectors(), index.sq_norms(), v, m);
  terms.upload(rounded.terms.data(), v, s);
  bf16.upload(rounded.bf16.data(), rounded.bf16.size(), s);
  LCRWMD_CUDA_CHECK(cudaStreamSynchronize(s));  // `rounded` goes out of scope
  std::size_t free = 0, total = 0;
  LCRWMD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const auto indptr = index.indptr();
  const std::size_t csr = csr_bytes(indptr, 0, index.n_docs());
  if (opt.memory_budget) {
    budget = opt.memory_budget;
  } else {
    // Most of what the resident set leaves; where it does not fit, half of what is free.
    const std::size_t rest = free > csr + 2 * kMargin ? free - csr - kMargin : free / 2;
    budget = std::max(rest - rest / 10, std::min(free / 2, std::size_t{256} * kMiB));
  }
  if (free < budget + kMargin)
    throw Error("the device memory budget (" + std::to_string(budget / kMiB) +
                " MiB) does not fit beside the vocabulary on " + device.name + " (" +
                std::to_string(free / kMiB) + " MiB free)");
  const std::size_t room = free - budget - kMargin;
  ranges = plan_doc_chunks(indptr, room, opt.chunk_docs);
  all_resident = csr + ranges.size() * 64 <= room;
  resident = v * m * sizeof(float) + v * sizeof(float) + terms.bytes() + bf16.bytes();
  if (all_resident) {
    chunks_.resize(ranges.size());
    for (std::size_t c = 0; c < ranges.size(); ++c) upload(chunks_[c], ranges[c]);
    resident += csr;
  } else {
    chunks_.resize(1);
    std::fprintf(stderr,
                 "lcrwmd: the resident set (%zu MiB) does not fit on %s beside %zu MiB of "
                 "working memory; every search uploads it in %zu chunks\n",
                 csr / kMiB, device.name.c_str(), budget / kMiB, ranges.size());
  }
}

Chunk& ResidentSet::chunk(std::size_t c) {
  if (all_resident) return chunks_[c];
  Chunk& slot = chunks_[0];
  if (slot.docs.begin != ranges[c].begin || slot.docs.end != ranges[c].end ||
      slot.indptr.data() == nullptr)
    upload(slot, ranges[c]);
  return slot;
}

void ResidentSet::upload(Chunk& c, DocRange r) {
  c.upload(index_, r, stream_);
  ++uploads_;
}

std::size_t ResidentSet::largest_chunk() const {
  std::size_t n = 0;
  for (const DocRange& r : ranges) n = std::max(n, r.size());
  return n;
}

}  // namespace lcrwmd::cuda
