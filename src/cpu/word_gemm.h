#pragma once
// Phase 1's GEMM on the CPU: the products e'.t' of every vocabulary word's vector with a batch's
// query-word vectors, in one precision, with the terms that bound each product's error
// (cpu/word_bounds.h):
//
//   f32   OpenBLAS's SGEMM on the vectors as stored.
//   bf16  both sides rounded to bfloat16 (products exact in float, sums in float): oneDNN on
//         AMX-BF16 or AVX-512 BF16.
//   int8  both sides as int8 times a scale per vector (sums exact in int32): oneDNN on AMX-INT8,
//         AVX-512 VNNI or AVX-VNNI.
//
// The vocabulary is rounded once, when the WordGemm is made, and packed tile by tile in the
// layout oneDNN's kernels read, so a search copies nothing of it; a batch's query words are
// rounded per batch (Columns). Each thread brings its own Workspace.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/simd.h"
#include "cpu/word_bounds.h"
#include "lcrwmd/index.h"
#include "lcrwmd/search.h"

namespace lcrwmd::cpu {

class WordGemm {
 public:
  // precision: f32, bf16 or int8, as resolve_precision() gives it. tile_rows: the vocabulary
  // words of one tile (products() computes a tile at a time).
  WordGemm(const Index& index, Precision precision, std::size_t tile_rows);
  ~WordGemm();
  WordGemm(const WordGemm&) = delete;
  WordGemm& operator=(const WordGemm&) = delete;

  Precision precision() const { return precision_; }
  std::size_t tile_rows() const { return tile_rows_; }
  std::size_t n_tiles() const { return (index_.vocab_size() + tile_rows_ - 1) / tile_rows_; }
  // Memory the rounded vocabulary takes (0 for f32, which reads the index's vectors).
  std::size_t bytes() const;
  // The implementation oneDNN chose, e.g. "brg:avx512_core_amx_int8" ("openblas" for f32).
  const std::string& implementation() const { return implementation_; }
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
    std::vector<std::byte> rounded;  // bf16/int8: n x padded dim
    std::vector<float> scale;        // int8
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

  // out[c * tile_rows() + r] = e'_{u0 + r} . t'_{c0 + c} for u0 = tile * tile_rows(), every
  // r < tile_rows() (rows past the vocabulary's end hold garbage), c < nc.
  void products(Workspace& ws, const Columns& cols, std::size_t tile, std::size_t c0,
                std::size_t nc, float* out) const;

 private:
  struct Packed;
  WordGemm(const Index& index, Precision precision, std::size_t tile_rows, bool check);
  void pack_vocabulary();
  void check_products() const;

  const Index& index_;
  Precision precision_;
  std::size_t tile_rows_;
  std::string implementation_ = "openblas";
  std::vector<float> ra_, rb_, rc_;  // per vocabulary word: bounds::Terms a, b, c
  void set_row_terms(std::size_t u, const bounds::Terms& t) {
    ra_[u] = t.a, rb_[u] = t.b, rc_[u] = t.c;
  }
  std::unique_ptr<Packed> packed_;  // bf16/int8
};

// The widest precision this CPU's oneDNN runs with exact products (bf16: AVX-512 BF16 or
// AMX-BF16; int8: VNNI or AMX-INT8), or an empty string; else what it lacks.
std::string missing_instructions(Precision p);
// The implementation oneDNN picks for p's phase-1 GEMM on this CPU ("openblas" for f32).
std::string gemm_implementation(Precision p);

}  // namespace lcrwmd::cpu
