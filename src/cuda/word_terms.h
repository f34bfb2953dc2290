#pragma once
// Phase 1 on the GPU as the CPU certifies it (cpu/word_bounds.h): the GEMM in f32 (cuBLAS
// SGEMM) or bf16 (tensor cores) only tells which query words can be a vocabulary word's
// nearest; its interval [estimate - beta, estimate + beta] holds the squared distance as the
// kernels recompute it from the float vectors, and those recomputed values are what every
// result is made of. So both precisions give the same bits. Here: each vector as the GEMM
// reads it and its share of beta, for the vocabulary (rows) and a batch's query words
// (columns). Plain C++, made on the host and tested without a device.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/word_bounds.h"
#include "lcrwmd/precision.h"

namespace lcrwmd::cuda {

// Which precision a device runs: gpu_precision (lcrwmd/gpu.h).

// Elements per row of a bf16 copy: the dimension padded to a multiple of 8 (16-byte rows, as
// tensor cores read them best); the padding is zeros, which change no product.
std::size_t bf16_stride(std::size_t dim);

enum class Side { rows, columns };  // vocabulary words, or a batch's query words

struct RoundedWords {
  std::vector<cpu::bounds::Terms> terms;  // per vector: its share of beta
  std::vector<std::uint16_t> bf16;        // bf16: n x bf16_stride(dim), else empty
};

// n vectors (row-major, dim floats each, with their float squared norms) for a GEMM of
// precision p (f32 or bf16), bounded for the GPU's sums (bounds::gpu_bound_dim).
RoundedWords round_words(Precision p, Side side, const float* vectors, const float* sq_norms,
                         std::size_t n, std::size_t dim);

}  // namespace lcrwmd::cuda
