#include "phase_floor.h"

#include <cstdint>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "bench_util.h"

namespace lcrwmd::bench {

double bare_int8_gemm(const Index& ix, std::size_t words) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const auto M = static_cast<dnnl::memory::dim>(words);
  const auto K = static_cast<dnnl::memory::dim>((ix.dim() + 63) / 64 * 64);
  const auto N = static_cast<dnnl::memory::dim>(ix.vocab_size());
  // The vocabulary's bytes are made once (their values do not change the time).
  static std::vector<std::int8_t> vocabulary;
  vocabulary.resize(static_cast<std::size_t>(K * N), 3);
  std::vector<std::int8_t> query(static_cast<std::size_t>(M * K), -5);
  std::vector<std::int32_t> out(static_cast<std::size_t>(M * N));
  const dnnl::memory::desc src({M, K}, dt::s8, tag::ab), weights({K, N}, dt::s8, tag::ba),
      dst({M, N}, dt::s32, tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), engine);
  const dnnl::matmul matmul(pd);
  dnnl::memory s(src, engine, query.data()), w(weights, engine, vocabulary.data()),
      d(dst, engine, out.data());
  dnnl::stream stream(engine);
  const auto run = [&] {
    matmul.execute(stream, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}});
    stream.wait();
  };
  run();  // oneDNN's first call sets up its kernel
  return seconds_of(run);
}

double stream_documents(const Index& ix) {
  const std::uint32_t* idx = ix.indices().data();
  // The weights' bits summed as integers: vectorised, where a sum of floats in order is a
  // chain of additions slower than the memory.
  const auto* val = reinterpret_cast<const std::uint32_t*>(ix.values().data());
  const auto n = static_cast<std::int64_t>(ix.nnz());
  std::uint64_t sum = 0;
  const double t = seconds_of([&] {
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t p = 0; p < n; ++p) sum += std::uint64_t{idx[p]} + val[p];
  });
  if (sum == 1) std::printf("(a checksum of 1: kept so that the pass is not left out)\n");
  return t;
}

}  // namespace lcrwmd::bench
