#include "cpu/word_gemm.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/simd.h"
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

dt element_type(Precision p) { return p == Precision::bf16 ? dt::bf16 : dt::s8; }
dt product_type(Precision p) { return p == Precision::bf16 ? dt::f32 : dt::s32; }
std::size_t element_bytes(Precision p) { return p == Precision::bf16 ? 2 : 1; }

// AMX multiplies tiles 64 bytes deep; zeros past the dimension change no product.
std::size_t padded_dim(std::size_t dim) { return (dim + 63) / 64 * 64; }

// Round to nearest even; denormals (which AMX would read as 0) become 0 here, so that the
// residual counts them.
std::uint16_t to_bf16(float x) {
  if (!(std::fabs(x) >= std::numeric_limits<float>::min())) return 0;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}
float from_bf16(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// Rounds x (dim floats) into `out` (padded with zeros to kp elements); returns its scale (int8;
// 1 for bf16) and sets the residual ||x - x'|| and the norm ||x||, in double.
float round_vector(Precision p, const float* x, std::size_t dim, std::size_t kp, std::byte* out,
                   double& residual, double& norm) {
  double res = 0, nrm = 0;
  float scale = 1;
  if (p == Precision::bf16) {
    auto* o = reinterpret_cast<std::uint16_t*>(out);
    for (std::size_t d = 0; d < dim; ++d) {
      o[d] = to_bf16(x[d]);
      const double e = double{x[d]} - double{from_bf16(o[d])};
      res += e * e;
      nrm += double{x[d]} * x[d];
    }
    std::fill(o + dim, o + kp, std::uint16_t{0});
  } else {
    auto* o = reinterpret_cast<std::int8_t*>(out);
    double largest = 0;
    for (std::size_t d = 0; d < dim; ++d) largest = std::max(largest, std::fabs(double{x[d]}));
    scale = std::isfinite(largest) ? static_cast<float>(largest / 127.0) : 0.0f;
    for (std::size_t d = 0; d < dim; ++d) {
      const double q =
          scale > 0 ? std::clamp(std::nearbyint(x[d] / double{scale}), -127.0, 127.0) : 0.0;
      o[d] = static_cast<std::int8_t>(q);
      const double e = double{x[d]} - q * scale;
      res += e * e;
      nrm += double{x[d]} * x[d];
    }
    std::fill(o + dim, o + kp, std::int8_t{0});
  }
  residual = std::sqrt(res);
  norm = std::sqrt(nrm);
  return scale;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* aligned_bytes(std::size_t n) {
  void* p = std::aligned_alloc(64, std::max<std::size_t>((n + 63) / 64 * 64, 64));
  if (!p) throw std::bad_alloc();
  return p;
}

struct FreeBytes {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

// The rounded vocabulary, one tile after another, each in the layout oneDNN's matmul reads
// (tile_rows words wide, zeros past the vocabulary's end), and int8's scales.
struct WordGemm::Packed {
  std::size_t kp = 0;
  dnnl::memory::desc weights;  // one tile: kp x tile_rows
  std::size_t tile_bytes = 0;
  std::unique_ptr<void, FreeBytes> data;
  std::vector<float> scale;  // int8: per word, n_tiles * tile_rows (zeros past the end)
};

struct WordGemm::Workspace::State {
  struct Shape {
    dnnl::matmul matmul;
    dnnl::memory src, weights, dst, scratchpad;
    std::vector<std::byte> scratch;
  };
  dnnl::stream stream{engine()};
  std::map<std::size_t, Shape> shapes;  // by query words per call
  std::vector<std::int32_t> sums;       // int8's products before scaling
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

std::string gemm_implementation(Precision p) {
  if (p != Precision::bf16 && p != Precision::int8) return "openblas";
  const dnnl::memory::desc src({16, 64}, element_type(p), tag::ab);
  const dnnl::memory::desc weights({64, 64}, element_type(p), tag::any);
  const dnnl::memory::desc dst({16, 64}, product_type(p), tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), user_scratchpad(),
                                        engine());
  return pd.impl_info_str();
}

WordGemm::WordGemm(const Index& index, Precision precision, std::size_t tile_rows)
    : WordGemm(index, precision, tile_rows, true) {}

WordGemm::WordGemm(const Index& index, Precision precision, std::size_t tile_rows, bool check)
    : index_(index), precision_(precision), tile_rows_(std::max<std::size_t>(tile_rows, 1)) {
  const std::size_t v = index.vocab_size(), m = index.dim();
  ra_.resize(v);
  rb_.resize(v);
  rc_.resize(v);
  if (precision_ == Precision::f32) {
#pragma omp parallel for schedule(static, 1024)
    for (std::size_t u = 0; u < v; ++u) {
      const float* e = index.vector(u);
      double nrm = 0;
      for (std::size_t d = 0; d < m; ++d) nrm += double{e[d]} * e[d];
      set_row_terms(u, bounds::row_terms(0.0, std::sqrt(nrm), index.sq_norms()[u], m));
    }
    return;
  }
  if (precision_ != Precision::bf16 && precision_ != Precision::int8)
    throw Error("phase 1: resolve the precision before making its GEMM");
  pack_vocabulary();
  if (check) check_products();
}

WordGemm::~WordGemm() = default;

std::size_t WordGemm::bytes() const {
  if (!packed_) return 0;
  return n_tiles() * packed_->tile_bytes + packed_->scale.size() * sizeof(float);
}

void WordGemm::pack_vocabulary() {
  const std::size_t v = index_.vocab_size(), m = index_.dim(), R = tile_rows_;
  packed_ = std::make_unique<Packed>();
  Packed& pk = *packed_;
  pk.kp = padded_dim(m);
  const auto kp = static_cast<dnnl::memory::dim>(pk.kp);
  const auto rows = static_cast<dnnl::memory::dim>(R);
  const dnnl::memory::desc any({kp, rows}, element_type(precision_), tag::any);
  const dnnl::memory::desc src({16, kp}, element_type(precision_), tag::ab);
  const dnnl::memory::desc dst({16, rows}, product_type(precision_), tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any, dst), user_scratchpad(),
                                        engine());
  implementation_ = pd.impl_info_str();
  pk.weights = pd.weights_desc();
  pk.tile_bytes = (pk.weights.get_size() + 63) / 64 * 64;
  const std::size_t tiles = n_tiles();
  pk.data.reset(aligned_bytes(tiles * pk.tile_bytes));
  if (precision_ == Precision::int8) pk.scale.assign(tiles * R, 0.0f);
  // Plain tiles (a word's kp elements contiguous: kp x rows in "ba") reordered into the packed
  // layout, which oneDNN's reorder fills with whatever its kernel needs (VNNI's compensation).
  const dnnl::memory::desc plain({kp, rows}, element_type(precision_), tag::ba);
  const dnnl::reorder::primitive_desc rd(engine(), plain, engine(), pk.weights, user_scratchpad());
  const dnnl::reorder reorder(rd);
  const std::size_t eb = element_bytes(precision_);
#pragma omp parallel
  {
    dnnl::stream stream(engine());
    std::vector<std::byte> buffer(R * pk.kp * eb);
    std::vector<std::byte> scratch(rd.scratchpad_desc().get_size() + 64);
    dnnl::memory in(plain, engine(), buffer.data());
    dnnl::memory out(pk.weights, engine(), pk.data.get());
    dnnl::memory pad(rd.scratchpad_desc(), engine(), scratch.data());
#pragma omp for schedule(dynamic)
    for (std::size_t t = 0; t < tiles; ++t) {
      std::fill(buffer.begin(), buffer.end(), std::byte{0});
      for (std::size_t r = 0; r < R && t * R + r < v; ++r) {
        const std::size_t u = t * R + r;
        double residual = 0, norm = 0;
        const float s = round_vector(precision_, index_.vector(u), m, pk.kp,
                                     buffer.data() + r * pk.kp * eb, residual, norm);
        if (!pk.scale.empty()) pk.scale[u] = s;
        set_row_terms(u, bounds::row_terms(residual, norm, index_.sq_norms()[u], m));
      }
      out.set_data_handle(static_cast<std::byte*>(pk.data.get()) + t * pk.tile_bytes);
      reorder.execute(stream,
                      {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, out}, {DNNL_ARG_SCRATCHPAD, pad}});
      stream.wait();
    }
  }
}

WordGemm::Columns WordGemm::columns(const float* vectors, const float* sq_norms,
                                    std::size_t n) const {
  const std::size_t m = index_.dim();
  Columns c;
  c.vectors = vectors;
  c.terms.resize(n);
  if (!packed_) {
    for (std::size_t j = 0; j < n; ++j) {
      double nrm = 0;
      for (std::size_t d = 0; d < m; ++d) nrm += double{vectors[j * m + d]} * vectors[j * m + d];
      c.terms[j] = bounds::column_terms(0.0, std::sqrt(nrm), sq_norms[j], m);
    }
    return c;
  }
  const std::size_t kp = packed_->kp, eb = element_bytes(precision_);
  c.rounded.resize(n * kp * eb);
  if (precision_ == Precision::int8) c.scale.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    double residual = 0, norm = 0;
    const float s = round_vector(precision_, vectors + j * m, m, kp, c.rounded.data() + j * kp * eb,
                                 residual, norm);
    if (!c.scale.empty()) c.scale[j] = s;
    c.terms[j] = bounds::column_terms(residual, norm, sq_norms[j], m);
  }
  return c;
}

void WordGemm::products(Workspace& workspace, const Columns& cols, std::size_t tile, std::size_t c0,
                        std::size_t nc, float* out) const {
  const std::size_t m = index_.dim(), R = tile_rows_, u0 = tile * R;
  if (!packed_) {
    const std::size_t rows = std::min(R, index_.vocab_size() - u0);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nc),
                static_cast<int>(rows), static_cast<int>(m), 1.0f, cols.vectors + c0 * m,
                static_cast<int>(m), index_.vector(u0), static_cast<int>(m), 0.0f, out,
                static_cast<int>(R));
    return;
  }
  const Packed& pk = *packed_;
  Workspace::State& ws = *workspace.state_;
  auto it = ws.shapes.find(nc);
  if (it == ws.shapes.end()) {
    const auto M = static_cast<dnnl::memory::dim>(nc);
    const dnnl::memory::desc src({M, static_cast<dnnl::memory::dim>(pk.kp)},
                                 element_type(precision_), tag::ab);
    const dnnl::memory::desc dst({M, static_cast<dnnl::memory::dim>(R)}, product_type(precision_),
                                 tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, pk.weights, dst),
                                          user_scratchpad(), engine());
    if (pd.weights_desc() != pk.weights)
      throw Error("phase 1: oneDNN's matmul asks for another layout of the vocabulary");
    Workspace::State::Shape s{dnnl::matmul(pd),
                              dnnl::memory(src, engine(), nullptr),
                              dnnl::memory(pk.weights, engine(), nullptr),
                              dnnl::memory(dst, engine(), nullptr),
                              {},
                              std::vector<std::byte>(pd.scratchpad_desc().get_size() + 64)};
    s.scratchpad = dnnl::memory(pd.scratchpad_desc(), engine(), s.scratch.data());
    it = ws.shapes.emplace(nc, std::move(s)).first;
  }
  Workspace::State::Shape& s = it->second;
  const std::size_t eb = element_bytes(precision_);
  s.src.set_data_handle(const_cast<std::byte*>(cols.rounded.data() + c0 * pk.kp * eb));
  s.weights.set_data_handle(static_cast<std::byte*>(pk.data.get()) + tile * pk.tile_bytes);
  if (precision_ == Precision::int8) {
    ws.sums.resize(nc * R);
    s.dst.set_data_handle(ws.sums.data());
  } else {
    s.dst.set_data_handle(out);
  }
  s.matmul.execute(ws.stream, {{DNNL_ARG_SRC, s.src},
                               {DNNL_ARG_WEIGHTS, s.weights},
                               {DNNL_ARG_DST, s.dst},
                               {DNNL_ARG_SCRATCHPAD, s.scratchpad}});
  ws.stream.wait();
  if (precision_ == Precision::int8) {
    const Kernels& k = kernels();
    for (std::size_t c = 0; c < nc; ++c)
      k.scale_products(ws.sums.data() + c * R, pk.scale.data() + u0, cols.scale[c0 + c], R,
                       out + c * R);
  }
}

// The bound takes oneDNN's kernels at their word: products of the rounded values, summed in
// float (bf16) or exactly (int8). A kernel that saturated (int8 without VNNI adds pairs in 16
// bits) or rounded otherwise would break it, so each new GEMM first multiplies one tile of
// extreme vectors (all +1, +-1 alternating, all -1, and others) and checks every product.
void WordGemm::check_products() const {
  const std::size_t m = index_.dim(), R = tile_rows_;
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
  const WordGemm probe(probe_index, precision_, R, false);
  const std::size_t n = std::min<std::size_t>(R, 8);
  const Columns cols = probe.columns(probe_index.vectors(), probe_index.sq_norms(), n);
  Workspace ws;
  std::vector<float> out(n * R);
  probe.products(ws, cols, 0, 0, n, out.data());
  const std::size_t kp = padded_dim(m), eb = element_bytes(precision_);
  std::vector<std::byte> rounded(R * kp * eb);
  std::vector<double> value(R * kp), scale(R);
  for (std::size_t r = 0; r < R; ++r) {
    double residual = 0, norm = 0;
    scale[r] = round_vector(precision_, probe_index.vector(r), m, kp, rounded.data() + r * kp * eb,
                            residual, norm);
    for (std::size_t d = 0; d < m; ++d) {
      const std::byte* x = rounded.data() + (r * kp + d) * eb;
      value[r * kp + d] =
          precision_ == Precision::bf16
              ? double{from_bf16(*reinterpret_cast<const std::uint16_t*>(x))}
              : scale[r] * static_cast<double>(*reinterpret_cast<const std::int8_t*>(x));
    }
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t r = 0; r < R; ++r) {
      double exact = 0, magnitude = 0;
      for (std::size_t d = 0; d < m; ++d) {
        exact += value[j * kp + d] * value[r * kp + d];
        magnitude += std::fabs(value[j * kp + d] * value[r * kp + d]);
      }
      const double allowed = 4.0 * (static_cast<double>(m) + 2) * 0x1p-24 * magnitude;
      if (!(std::fabs(double{out[j * R + r]} - exact) <= allowed))
        throw Error("phase 1's " + std::string(to_string(precision_)) + " GEMM (oneDNN " +
                    implementation_ +
                    ") gives products outside their error bound on this CPU: use --precision f32");
    }
}

}  // namespace lcrwmd::cpu
