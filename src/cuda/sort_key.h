#pragma once
// A (distance, document) pair as one 64-bit key whose unsigned order is the project's result
// order (lcrwmd/topk.h: ascending distance, ties by the smaller index), so that one radix sort
// of keys on the GPU ranks candidates exactly as the CPU does. Plain C++, shared by the CUDA
// kernels and the CPU tests.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define LCRWMD_HOST_DEVICE __host__ __device__
#else
#define LCRWMD_HOST_DEVICE
#endif

namespace lcrwmd::cuda {

// IEEE-754 bits mapped so that unsigned comparison orders floats numerically (-0 == +0).
LCRWMD_HOST_DEVICE inline std::uint32_t ordered_bits(float d) {
  if (d == 0.0f) d = 0.0f;  // -0 and +0 are one distance
  std::uint32_t b;
#ifdef __CUDA_ARCH__
  b = __float_as_uint(d);
#else
  std::memcpy(&b, &d, sizeof b);
#endif
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

LCRWMD_HOST_DEVICE inline float from_ordered_bits(std::uint32_t o) {
  const std::uint32_t b = (o & 0x80000000u) ? (o & 0x7fffffffu) : ~o;
  float d;
#ifdef __CUDA_ARCH__
  d = __uint_as_float(b);
#else
  std::memcpy(&d, &b, sizeof d);
#endif
  return d;
}

LCRWMD_HOST_DEVICE inline std::uint64_t sort_key(float distance, std::uint32_t doc) {
  return (std::uint64_t{ordered_bits(distance)} << 32) | doc;
}
LCRWMD_HOST_DEVICE inline float key_distance(std::uint64_t key) {
  return from_ordered_bits(static_cast<std::uint32_t>(key >> 32));
}
LCRWMD_HOST_DEVICE inline std::uint32_t key_doc(std::uint64_t key) {
  return static_cast<std::uint32_t>(key);
}

// Candidates a row's top-k buffer holds (select_k.cu). The sampled threshold lets about
// k * n / 2048 distances through; 16x that, and never less than 8192, leaves room for ties and
// unlucky samples.
inline std::size_t select_capacity(std::size_t n, std::size_t k) {
  return std::min(n, std::max<std::size_t>(8192, 16 * k * (n / 2048 + 1)));
}

}  // namespace lcrwmd::cuda
