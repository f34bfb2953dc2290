#include "cpu/word_gemm.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>

#include "lcrwmd/error.h"

namespace lcrwmd::cpu {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

bool has_isa(dnnl::cpu_isa isa) {
  const auto want = static_cast<unsigned>(isa);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & want) == want;
}

dt element_type(Precision p) {
  return p == Precision::f32 ? dt::f32 : p == Precision::bf16 ? dt::bf16 : dt::s8;
}
dt product_type(Precision p) { return p == Precision::int8 ? dt::s32 : dt::f32; }
std::size_t element_bytes(Precision p) {
  return p == Precision::f32 ? 4 : p == Precision::bf16 ? 2 : 1;
}

// AMX multiplies tiles 64 bytes deep; zeros past the dimension change no product.
std::size_t padded_dim(std::size_t dim) { return (dim + 63) / 64 * 64; }

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

float from_bf16(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// int8's scale of a vector: q = nearbyint(x * invert), x' = scale q. The products are scaled by
// `scale` as a float, so x' is exactly what they multiply.
struct Int8Scale {
  float scale, invert;
};
Int8Scale int8_scale(const float* x, std::size_t dim) {
  float largest = 0;
  for (std::size_t d = 0; d < dim; ++d) largest = std::max(largest, std::fabs(x[d]));
  if (!(largest > 0) || !std::isfinite(largest)) return {0.0f, 0.0f};
  const float invert = 127.0f / largest;
  return {static_cast<float>(1.0 / double{invert}), invert};
}

// What rounding x took, its rounded copy's element d being rounded(d) (a double).
template <typename Rounded>
Rounding rounding_of(const float* x, std::size_t dim, Rounded rounded) {
  Rounding r;
  for (std::size_t d = 0; d < dim; ++d) {
    const double e = double{x[d]} - rounded(d);
    r.residual += e * e;
    r.norm += double{x[d]} * x[d];
  }
  r.residual = std::sqrt(r.residual);
  r.norm = std::sqrt(r.norm);
  return r;
}

// A vector rounded as the GEMM reads it, padded with zeros to kp elements (out).
Rounding round_vector(Precision p, const float* x, std::size_t dim, std::size_t kp,
                      const Int8Scale& s, std::byte* out) {
  if (p == Precision::bf16) return round_to_bf16(x, dim, kp, reinterpret_cast<std::uint16_t*>(out));
  auto* o = reinterpret_cast<std::int8_t*>(out);
  kernels().round_int8(x, dim, s.invert, o);
  std::fill(o + dim, o + kp, std::int8_t{0});
  return rounding_of(x, dim, [&](std::size_t d) { return double{s.scale} * o[d]; });
}

}  // namespace

Rounding round_to_bf16(const float* x, std::size_t dim, std::size_t kp, std::uint16_t* out) {
  kernels().round_bf16(x, dim, out);
  std::fill(out + dim, out + kp, std::uint16_t{0});
  return rounding_of(x, dim, [&](std::size_t d) { return double{from_bf16(out[d])}; });
}

double norm_of(const float* x, std::size_t dim) {
  double s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += double{x[d]} * x[d];
  return std::sqrt(s);
}

struct WordGemm::Workspace::State {
  std::vector<std::byte> tile;  // bf16/int8: the tile's rounded vocabulary rows
  struct Shape {
    dnnl::matmul matmul;
    dnnl::memory src, weights, dst, scratchpad;
    std::vector<std::byte> scratch;
  };
  dnnl::stream stream{engine()};
  std::map<std::array<std::size_t, 3>, Shape> shapes;  // by (query words, rows, ld)
  std::vector<std::int32_t> sums;                      // int8's products unscaled
};

WordGemm::Workspace::Workspace() : state_(std::make_unique<State>()) {}
WordGemm::Workspace::~Workspace() = default;
WordGemm::Workspace::Workspace(Workspace&&) noexcept = default;
WordGemm::Workspace& WordGemm::Workspace::operator=(Workspace&&) noexcept = default;

std::string missing_instructions(Precision p) {
  switch (p) {
    case Precision::bf16:
      return has_isa(dnnl::cpu_isa::avx512_core_bf16) ? "" : "AVX512_BF16 (or AMX-BF16)";
    case Precision::int8:
      return has_isa(dnnl::cpu_isa::avx512_core_vnni) || has_isa(dnnl::cpu_isa::avx2_vnni)
                 ? ""
                 : "AVX512_VNNI, AVX-VNNI or AMX-INT8";
    default:
      return "";
  }
}

bool has_amx() { return has_isa(dnnl::cpu_isa::avx512_core_amx); }

bool int8_direct_bounds(Precision p, std::size_t dim) {
  // Not with AMX: oneDNN's tiles multiply several times faster than VNNI, and our kernel has
  // not been measured against them there (auto takes bf16 on those CPUs).
  return p == Precision::int8 && kernels().int8_bound_strip != nullptr && !has_amx() &&
         padded_dim(dim) <= 65536;
}

std::string gemm_implementation(Precision p) {
  const dnnl::memory::desc src({16, 64}, element_type(p), tag::ab);
  const dnnl::memory::desc weights({64, 64}, element_type(p), tag::ba);
  const dnnl::memory::desc dst({16, 64}, product_type(p), tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), user_scratchpad(),
                                        engine());
  return pd.impl_info_str();
}

WordGemm::WordGemm(const Index& index, Precision precision) : WordGemm(index, precision, true) {}

WordGemm::WordGemm(const Index& index, Precision precision, bool check)
    : index_(index), precision_(precision) {
  if (precision_ != Precision::f32 && precision_ != Precision::bf16 &&
      precision_ != Precision::int8)
    throw Error("phase 1: resolve the precision before making its GEMM");
  const std::size_t v = index.vocab_size(), m = index.dim();
  ra_.resize(v);
  rb_.resize(v);
  rc_.resize(v);
  implementation_ = gemm_implementation(precision_);
  kp_ = precision_ == Precision::f32 ? m : padded_dim(m);
  if (precision_ == Precision::int8) {
    scale_.resize(v);
    invert_.resize(v);
    if (int8_direct_bounds(precision_, m)) bias_.resize(v);
  }
  const std::size_t row_bytes = kp_ * element_bytes(precision_);
  if (precision_ != Precision::f32) rounded_ = HugePageBuffer(v * row_bytes);
#pragma omp parallel for schedule(static, 1024)
  for (std::size_t u = 0; u < v; ++u) {
    const float* e = index.vector(u);
    Rounding r{0.0, 0.0};
    if (precision_ == Precision::f32) {
      r.norm = norm_of(e, m);
    } else {
      const Int8Scale s = precision_ == Precision::int8 ? int8_scale(e, m) : Int8Scale{1, 1};
      if (!scale_.empty()) scale_[u] = s.scale, invert_[u] = s.invert;
      r = round_vector(precision_, e, m, kp_, s, rounded_.data() + u * row_bytes);
    }
    if (!bias_.empty()) {
      const auto* q = reinterpret_cast<const std::int8_t*>(rounded_.data() + u * row_bytes);
      std::int32_t sum = 0;
      for (std::size_t d = 0; d < m; ++d) sum += q[d];
      bias_[u] = 128 * sum;
    }
    const bounds::Terms t = bounds::row_terms(r.residual, r.norm, index.sq_norms()[u], m);
    ra_[u] = t.a, rb_[u] = t.b, rc_[u] = t.c;
  }
  if (check) check_products();
}

WordGemm::~WordGemm() = default;

WordGemm::Columns WordGemm::columns(const float* vectors, const float* sq_norms,
                                    std::size_t n) const {
  const std::size_t m = index_.dim();
  Columns c;
  c.vectors = vectors;
  c.sq_norms = sq_norms;
  c.terms.resize(n);
  const std::size_t eb = element_bytes(precision_);
  if (precision_ != Precision::f32) c.rounded.resize(n * kp_ * eb);  // f32: read in place
  if (precision_ == Precision::int8) c.scale.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const float* t = vectors + j * m;
    Rounding r{0.0, 0.0};
    if (precision_ == Precision::f32) {
      r.norm = norm_of(t, m);
    } else {
      const Int8Scale s = precision_ == Precision::int8 ? int8_scale(t, m) : Int8Scale{1, 1};
      if (!c.scale.empty()) c.scale[j] = s.scale;
      r = round_vector(precision_, t, m, kp_, s, c.rounded.data() + j * kp_ * eb);
    }
    c.terms[j] = bounds::column_terms(r.residual, r.norm, sq_norms[j], m);
  }
  if (direct_bounds()) {
    // Sixteen words a block; in each, every group of four bytes of the sixteen words together,
    // each byte moved from [-127, 127] to [1, 255] (VNNI multiplies unsigned bytes by signed
    // ones; the vocabulary word's bias takes the 128 back out of the sum).
    const auto* q = reinterpret_cast<const std::int8_t*>(c.rounded.data());
    c.blocks.assign((n + 15) / 16 * 16 * kp_, std::uint8_t{128});
    for (std::size_t j = 0; j < n; ++j) {
      std::uint8_t* block = c.blocks.data() + j / 16 * 16 * kp_ + j % 16 * 4;
      for (std::size_t d = 0; d < kp_; ++d)
        block[d / 4 * 64 + d % 4] = static_cast<std::uint8_t>(q[j * kp_ + d] + 128);
    }
    // The words past the last whole block also as the narrow kernel reads them (simd.h).
    c.narrow.resize(n % 16 * kp_);
    std::uint8_t* part = c.narrow.data();
    for (std::size_t c0 = n / 16 * 16; c0 < n;) {
      const std::size_t words = std::bit_floor(n - c0), lanes = 16 / words;
      for (std::size_t j = 0; j < words; ++j)
        for (std::size_t d = 0; d < kp_; ++d) {
          const std::size_t group = d / 4;
          part[group / lanes * 64 + (group % lanes + lanes * j) * 4 + d % 4] =
              static_cast<std::uint8_t>(q[(c0 + j) * kp_ + d] + 128);
        }
      part += words * kp_;
      c0 += words;
    }
    for (const bounds::Terms& t : c.terms) {
      c.term_a.push_back(t.a);
      c.term_b.push_back(t.b);
      c.term_c.push_back(t.c);
    }
  }
  return c;
}

void WordGemm::lower_bounds(const Columns& cols, std::size_t u0, std::size_t n, float* lo,
                            std::size_t ld) const {
  const Int8Rows rows{reinterpret_cast<const std::int8_t*>(rounded_.data() + u0 * kp_),
                      bias_.data() + u0, scale_.data() + u0, bound_rows(u0)};
  // The terms of the rows two strips on (a strip: n <= 16 rows) on their way, as the kernels
  // fetch those rows' bytes: six arrays advancing a line a strip, which the hardware fetched
  // too late (their loads were a quarter of a Set 1 typed query's narrow kernel).
  if (const std::size_t ahead = u0 + 32; ahead < bias_.size())
    for (const void* line : {static_cast<const void*>(bias_.data() + ahead),
                             static_cast<const void*>(scale_.data() + ahead),
                             static_cast<const void*>(index_.sq_norms() + ahead),
                             static_cast<const void*>(ra_.data() + ahead),
                             static_cast<const void*>(rb_.data() + ahead),
                             static_cast<const void*>(rc_.data() + ahead)})
      __builtin_prefetch(line);
  const Int8Columns columns{cols.blocks.data(),
                            cols.scale.data(),
                            cols.sq_norms,
                            {nullptr, cols.term_a.data(), cols.term_b.data(), cols.term_c.data()},
                            cols.narrow.empty() ? nullptr : cols.narrow.data()};
  kernels().int8_bound_strip(rows, n, kp_, columns, cols.size(), lo, ld);
}

void WordGemm::estimates(Workspace& workspace, const Columns& cols, std::size_t u0,
                         std::size_t rows, std::size_t c0, std::size_t nc, float* out,
                         std::size_t ld) const {
  const std::size_t m = index_.dim();
  const Kernels& k = kernels();
  Workspace::State& ws = *workspace.state_;
  const std::size_t eb = element_bytes(precision_);
  // Float products go straight to `out` (row stride ld) and become estimates there; int8's
  // integer sums are scaled on the way.
  const bool direct = precision_ != Precision::int8;
  const std::array<std::size_t, 3> shape{nc, rows, direct ? ld : rows};
  auto it = ws.shapes.find(shape);
  if (it == ws.shapes.end()) {
    const auto M = static_cast<dnnl::memory::dim>(nc), N = static_cast<dnnl::memory::dim>(rows),
               K = static_cast<dnnl::memory::dim>(kp_);
    const dnnl::memory::desc src({M, K}, element_type(precision_), tag::ab);
    const dnnl::memory::desc weights({K, N}, element_type(precision_), tag::ba);
    const dnnl::memory::desc dst({M, N}, product_type(precision_),
                                 {static_cast<dnnl::memory::dim>(shape[2]), 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), user_scratchpad(),
                                          engine());
    Workspace::State::Shape s{dnnl::matmul(pd),
                              dnnl::memory(src, engine(), nullptr),
                              dnnl::memory(weights, engine(), nullptr),
                              dnnl::memory(dst, engine(), nullptr),
                              {},
                              std::vector<std::byte>(pd.scratchpad_desc().get_size() + 64)};
    s.scratchpad = dnnl::memory(pd.scratchpad_desc(), engine(), s.scratch.data());
    it = ws.shapes.emplace(shape, std::move(s)).first;
  }
  Workspace::State::Shape& s = it->second;
  if (precision_ == Precision::f32) {
    s.src.set_data_handle(const_cast<float*>(cols.vectors + c0 * m));
    s.weights.set_data_handle(const_cast<float*>(index_.vector(u0)));
  } else {
    s.src.set_data_handle(const_cast<std::byte*>(cols.rounded.data() + c0 * kp_ * eb));
    // The tile's rounded rows, each padded to kp_ (the weights' "ba" layout), copied in one
    // sequential read: the GEMM's own blocked reads from memory ran slower (f32 reads the
    // vectors in place).
    ws.tile.resize(rows * kp_ * eb);
    std::memcpy(ws.tile.data(), rounded_.data() + u0 * kp_ * eb, rows * kp_ * eb);
    s.weights.set_data_handle(ws.tile.data());
  }
  if (direct) {
    s.dst.set_data_handle(out);
  } else {
    ws.sums.resize(nc * rows);
    s.dst.set_data_handle(ws.sums.data());
  }
  s.matmul.execute(ws.stream, {{DNNL_ARG_SRC, s.src},
                               {DNNL_ARG_WEIGHTS, s.weights},
                               {DNNL_ARG_DST, s.dst},
                               {DNNL_ARG_SCRATCHPAD, s.scratchpad}});
  ws.stream.wait();
  for (std::size_t c = 0; c < nc; ++c)
    if (direct)
      k.estimates(out + c * ld, cols.sq_norms[c0 + c], rows, out + c * ld);
    else
      k.estimates_s32(ws.sums.data() + c * rows, scale_.data() + u0, cols.scale[c0 + c],
                      cols.sq_norms[c0 + c], rows, out + c * ld);
}

// The bound takes oneDNN's kernels at their word: products of the rounded values, summed in
// float (bf16) or exactly (int8). A kernel that saturated (int8 without VNNI adds pairs in 16
// bits) or rounded otherwise would break it, so each new GEMM first multiplies a tile of
// extreme vectors (all +1, +-1 alternating, all -1, and others) and checks every product.
void WordGemm::check_products() const {
  const std::size_t m = index_.dim(), R = 64;
  const auto pattern = [](std::size_t r, std::size_t d) {
    switch (r % 4) {
      case 0:
        return 1.0f;
      case 1:
        return d % 2 ? -1.0f : 1.0f;
      case 2:
        return -1.0f;
      default:
        return std::sin(0.7f * static_cast<float>(d * (r + 1))) * 3.0f;
    }
  };
  IndexData data;
  data.dim = m;
  for (std::size_t r = 0; r < R; ++r) {
    data.vocab.push_back(std::to_string(r));
    data.doc_freq.push_back(1);
    for (std::size_t d = 0; d < m; ++d) data.vectors.push_back(pattern(r, d));
  }
  data.indptr = {0, 1};
  data.indices = {0};
  data.values = {1.0f};
  data.ids = {"probe"};
  data.labels = {""};
  const Index probe_index = Index::from_data(data);
  const WordGemm probe(probe_index, precision_, false);
  const std::size_t n = 8;
  const Columns cols = probe.columns(probe_index.vectors(), probe_index.sq_norms(), n);
  Workspace ws;
  std::vector<float> out(n * R);
  probe.estimates(ws, cols, 0, R, 0, n, out.data(), R);
  // The rounded values as the GEMM was given them, in double.
  const std::size_t eb = element_bytes(precision_);
  std::vector<std::byte> rounded(kp_ * eb);
  std::vector<double> value(R * m);
  for (std::size_t r = 0; r < R; ++r) {
    const float* x = probe_index.vector(r);
    const Int8Scale s = precision_ == Precision::int8 ? int8_scale(x, m) : Int8Scale{1, 1};
    if (precision_ != Precision::f32) round_vector(precision_, x, m, kp_, s, rounded.data());
    for (std::size_t d = 0; d < m; ++d)
      value[r * m + d] =
          precision_ == Precision::f32 ? double{x[d]}
          : precision_ == Precision::bf16
              ? double{from_bf16(reinterpret_cast<const std::uint16_t*>(rounded.data())[d])}
              : double{s.scale} * reinterpret_cast<const std::int8_t*>(rounded.data())[d];
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t r = 0; r < R; ++r) {
      double exact = 0, magnitude = 0;
      for (std::size_t d = 0; d < m; ++d) {
        exact += value[j * m + d] * value[r * m + d];
        magnitude += std::fabs(value[j * m + d] * value[r * m + d]);
      }
      // out = |t|^2 - 2 p, both terms rounded once more than the product.
      const double tn = probe_index.sq_norms()[j];
      const double allowed = 4.0 * (static_cast<double>(m) + 4) * 0x1p-24 * (2 * magnitude + tn);
      if (!(std::fabs(double{out[j * R + r]} - (tn - 2 * exact)) <= allowed))
        throw Error("phase 1's " + std::string(to_string(precision_)) + " GEMM (oneDNN " +
                    implementation_ +
                    ") gives products outside their error bound on this CPU: use --precision f32");
    }
}

}  // namespace lcrwmd::cpu
