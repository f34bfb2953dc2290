#include "cuda/word_terms.h"

#include <string>

#include "cpu/word_gemm.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd::cuda {

std::size_t bf16_stride(std::size_t dim) { return (dim + 7) / 8 * 8; }

RoundedWords round_words(Precision p, Side side, const float* vectors, const float* sq_norms,
                         std::size_t n, std::size_t dim) {
  if (p != Precision::f32 && p != Precision::bf16)
    throw Error(std::string("the GPU's phase 1 has no precision ") + to_string(p));
  RoundedWords out;
  out.terms.resize(n);
  const std::size_t ld = bf16_stride(dim), bound_dim = cpu::bounds::gpu_bound_dim(dim);
  if (p == Precision::bf16) out.bf16.resize(n * ld);
#pragma omp parallel for schedule(static, 1024) if (n > 4096)
  for (std::size_t i = 0; i < n; ++i) {
    const float* x = vectors + i * dim;
    const cpu::Rounding r = p == Precision::bf16
                                ? cpu::round_to_bf16(x, dim, ld, out.bf16.data() + i * ld)
                                : cpu::Rounding{0.0, cpu::norm_of(x, dim)};
    out.terms[i] = side == Side::rows
                       ? cpu::bounds::row_terms(r.residual, r.norm, sq_norms[i], bound_dim)
                       : cpu::bounds::column_terms(r.residual, r.norm, sq_norms[i], bound_dim);
  }
  return out;
}

}  // namespace lcrwmd::cuda

namespace lcrwmd {

Precision gpu_precision(const GpuDevice& device, Precision p) {
  const int major = device.compute_major;
  constexpr int kBf16Major = 8;  // Ampere: BF16 tensor cores
  switch (p) {
    case Precision::automatic:
      return major >= kBf16Major ? Precision::bf16 : Precision::f32;
    case Precision::f32:
      return p;
    case Precision::bf16:
      if (major < kBf16Major)
        throw Error("precision bf16 needs a GPU of compute capability 8.0 or later (this one is " +
                    std::to_string(major) + ".x; auto takes f32 there)");
      return p;
    case Precision::int8:
      break;
  }
  throw Error("precision int8 runs on the CPU only (the GPU has f32 and bf16; auto picks)");
}

}  // namespace lcrwmd
