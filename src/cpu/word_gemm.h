#pragma once
// Phase 1's GEMM on the CPU: the products e'.t' of vocabulary words' vectors with a batch's
// query-word vectors, in one precision, with the terms that bound each product's error
// (cpu/word_bounds.h):
//
//   f32   oneDNN's f32 matmul on the vectors as stored (on phase-1 tiles faster than OpenBLAS's
//         SGEMM on an AVX-512 Xeon: BENCHMARKS.md, "Precision").
//   bf16  both sides rounded to bfloat16 (products exact in float, sums in float): oneDNN on
//         AMX-BF16 or AVX-512 BF16.
//   int8  both sides as int8 times a scale per vector (sums exact in int32): oneDNN on AMX-INT8,
//         AVX-512 VNNI or AVX-VNNI.
//
// The vocabulary is rounded once, when the WordGemm is made, and kept (int8: the padded
// dimension in bytes per word, 138 MiB for Set 1's 452,058 words; bf16 twice that): a top-k
// recomputes the few words its refined documents hold, so phase 1 reads the rounded copy, not
// the float vectors, and rounds nothing per batch. Beside it, each word's share of the error
// bound (and int8's scale and the sum of its bytes): 16-20 bytes a word.
//
// int8 on a CPU with AVX512-VNNI also bounds without oneDNN (direct_bounds()): our kernel
// (simd.h: int8_bound_strip) keeps each product in a register until it is a lower bound, the
// same bits as the GEMM's exact integer sums followed by the bound, without writing them.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/simd.h"
#include "cpu/word_bounds.h"
#include "lcrwmd/index.h"
#include "lcrwmd/search.h"
#include "util/large_array.h"

namespace lcrwmd::cpu {

class WordGemm {
 public:
  // precision: f32, bf16 or int8, as resolve_precision() gives it. Checks oneDNN's kernel
  // (check_products) before anything is computed with it.
  WordGemm(const Index& index, Precision precision);
  ~WordGemm();
  WordGemm(const WordGemm&) = delete;
  WordGemm& operator=(const WordGemm&) = delete;

  Precision precision() const { return precision_; }
  // Vocabulary word u's share of the error bound, alone and as the kernels read it (from u on).
  bounds::Terms row_terms(std::size_t u) const { return {ra_[u], rb_[u], rc_[u]}; }
  BoundTermArrays bound_rows(std::size_t u) const {
    return {index_.sq_norms() + u, ra_.data() + u, rb_.data() + u, rc_.data() + u};
  }

  // A batch's query-word vectors (n x dim, row-major, with their float squared norms) rounded
  // as the vocabulary is, with each one's share of the bound.
  class Columns {
   public:
    std::size_t size() const { return terms.size(); }
    std::vector<bounds::Terms> terms;

   private:
    friend class WordGemm;
    const float* vectors = nullptr;  // f32: read in place
    const float* sq_norms = nullptr;
    std::vector<std::byte> rounded;  // bf16/int8: n x padded dim
    std::vector<float> scale;        // int8
    // direct_bounds(): the words laid out as int8_bound_strip reads them, and their terms.
    std::vector<std::uint8_t> blocks;
    std::vector<std::uint8_t> narrow;  // those past the last block (simd.h: Int8Columns::narrow)
    std::vector<float> term_a, term_b, term_c;
  };
  Columns columns(const float* vectors, const float* sq_norms, std::size_t n) const;

  // One thread's oneDNN stream, primitives and scratch.
  class Workspace {
   public:
    Workspace();
    ~Workspace();
    Workspace(Workspace&&) noexcept;
    Workspace& operator=(Workspace&&) noexcept;

   private:
    friend class WordGemm;
    struct State;
    std::unique_ptr<State> state_;
  };

  // The estimates of squared distances less the vocabulary words' squared norms:
  // out[c * ld + r] = |t_{c0 + c}|^2 - 2 e'_{u0 + r} . t'_{c0 + c} for r < rows, c < nc
  // (ld >= rows), |t|^2 the squared norm the Columns were made with.
  void estimates(Workspace& ws, const Columns& cols, std::size_t u0, std::size_t rows,
                 std::size_t c0, std::size_t nc, float* out, std::size_t ld) const;

  // Whether lower_bounds() runs here (int8_direct_bounds).
  bool direct_bounds() const { return !bias_.empty(); }
  // The lower bounds of vocabulary words [u0, u0 + n), n <= 16, against every column, as
  // estimates() and then the bound (cpu/word_bounds.h) give them: column c at lo + c * ld.
  void lower_bounds(const Columns& cols, std::size_t u0, std::size_t n, float* lo,
                    std::size_t ld) const;

 private:
  WordGemm(const Index& index, Precision precision, bool check);
  void check_products() const;

  const Index& index_;
  Precision precision_;
  std::string implementation_;         // oneDNN's, e.g. "brg:avx512_core_amx_int8"
  std::size_t kp_ = 0;                 // bf16/int8: the dimension, padded for AMX
  std::vector<float> ra_, rb_, rc_;    // per vocabulary word: bounds::Terms a, b, c
  std::vector<float> scale_, invert_;  // int8: per vocabulary word, e' = scale q, q = e invert
  std::vector<std::int32_t> bias_;     // direct_bounds(): 128 times the sum of each word's q
  HugePageBuffer rounded_;             // bf16/int8: the vocabulary rounded, v x kp_
};

// What rounding a vector for a low-precision GEMM took away, ||x - x'||, beside ||x||, in
// double: its share of the error bound comes from these (bounds::row_terms, column_terms).
struct Rounding {
  double residual = 0, norm = 0;
};
// x rounded to bfloat16 (to nearest, ties to even) into out, padded with zeros to kp >= dim
// elements: what every bf16 GEMM of phase 1 reads, on the CPU and on the GPU.
Rounding round_to_bf16(const float* x, std::size_t dim, std::size_t kp, std::uint16_t* out);
// ||x|| in double (an f32 GEMM rounds nothing: residual 0).
double norm_of(const float* x, std::size_t dim);

// Whether int8's lower bounds of vectors of `dim` dimensions come from our kernel
// (int8_bound_strip) rather than oneDNN's GEMM: precision p is int8, this CPU's kernels have
// one (VNNI), oneDNN has no AMX tiles here, and the kernel's biased sums (up to 255 x 127 a
// dimension) stay exact in 32 bits, which they do up to 65,536 padded dimensions.
bool int8_direct_bounds(Precision p, std::size_t dim);

// What the CPU lacks for precision p (bf16: AVX-512 BF16 or AMX-BF16; int8: VNNI or AMX-INT8,
// whose integer sums are exact), or "" where it has it.
std::string missing_instructions(Precision p);
// Whether oneDNN runs AMX tiles here (then bf16's and int8's GEMMs cost about the same).
bool has_amx();
// The implementation oneDNN picks for p's phase-1 GEMM on this CPU.
std::string gemm_implementation(Precision p);

}  // namespace lcrwmd::cpu
