// The CUDA backend side by side with the bare cuBLAS SGEMM of its phase 1: single-query
// latency (one-sided, symmetric), batched throughput, phase 1 in the device's precision
// (bf16 where it has tensor cores for it) beside f32 in the same process with the same results
// checked, the documents whose D2 the symmetric top-k computes against the CPU's, TF32's speed
// and accuracy, the GPU quadratic RWMD per pair, and the all-pairs time extrapolated from the
// throughput.
#include "bench_gpu.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cuda_baselines.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/search.h"

namespace lcrwmd::bench {
namespace {

SearchOptions gpu_options(Method method, bool symmetric, std::size_t batch) {
  SearchOptions o;
  o.method = method;
  o.direction = symmetric ? Direction::symmetric : Direction::document_to_query;
  o.batch = batch;
  return o;
}

}  // namespace

void gpu_benchmarks(const Index& ix, const QuerySet& qs, int device, std::size_t reps,
                    const std::vector<std::size_t>& batches, Report& rep,
                    std::map<std::string, std::string>& meta) {
  if (device < 0 || static_cast<std::size_t>(device) >= gpu_device_count())
    throw Error("lcrwmd_bench gpu: no CUDA device " + std::to_string(device));
  const GpuDevice dev = gpu_device(device);
  meta["device"] = dev.name;
  const double n = static_cast<double>(ix.n_docs());
  std::printf("%s: %zu documents, vocabulary %zu, dim %zu, %.1f words/doc, %zu queries\n",
              dev.name.c_str(), ix.n_docs(), ix.vocab_size(), ix.dim(),
              static_cast<double>(ix.nnz()) / n, qs.size());

  const SearchOptions one = gpu_options(Method("lc-rwmd"), false, 1);
  const SearchOptions sym = gpu_options(Method("lc-rwmd"), true, 1);
  // Two resident sets side by side, each with a third of the device's free memory to work in.
  GpuOptions go;
  go.device = device;
  go.memory_budget = dev.free_bytes / 3;
  GpuIndex* gpu_ptr = nullptr;
  const double upload = seconds_of([&] { gpu_ptr = new GpuIndex(ix, go); });
  const std::unique_ptr<GpuIndex> gpu(gpu_ptr);
  GpuOptions go32 = go;
  go32.precision = Precision::f32;
  const GpuIndex f32(ix, go32);
  const std::string prec = to_string(gpu->precision());
  meta["precision"] = prec;
  rep.add("upload of the resident set (s)", upload, "s");
  rep.add("resident set on the device (MiB)",
          static_cast<double>(gpu->resident_bytes()) / (1 << 20), "MiB");
  rep.add("resident chunks", static_cast<double>(gpu->chunks()), "");

  // Single queries, interleaved with the bare GEMM of the same shape and with f32's.
  std::vector<double> gemm, t_one, t_sym, t_tf32, r_gemm, r_sym, t_one32, t_sym32, r_32;
  std::size_t refined = 0, tightened = 0, differing = 0;
  const auto identical = [](const SearchResults& a, const SearchResults& b) {
    return a.indices == b.indices &&
           std::equal(a.distances.begin(), a.distances.end(), b.distances.begin(),
                      b.distances.end(), [](float x, float y) {
                        return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
                      });
  };
  for (std::size_t r = 0; r < reps + 1; ++r) {
    const QuerySet q = slice(qs, r % qs.size(), 1);
    const double g = time_cublas_sgemm(device, ix.vocab_size(), q.length(0), ix.dim(), false, 3);
    SearchResults ro, rs, ro32, rs32;
    const double o = seconds_of([&] { ro = gpu->search(q, 10, one); });
    SearchStats st;
    const double s = seconds_of([&] { rs = gpu->search(q, 10, sym, &st); });
    const double o32 = seconds_of([&] { ro32 = f32.search(q, 10, one); });
    const double s32 = seconds_of([&] { rs32 = f32.search(q, 10, sym); });
    gpu->set_allow_tf32(true);
    const double t = seconds_of([&] { gpu->search(q, 10, one); });
    gpu->set_allow_tf32(false);
    differing += !identical(ro, ro32) + !identical(rs, rs32);
    if (r == 0) continue;  // warm-up: cuBLAS heuristics, scratch allocations
    gemm.push_back(g);
    t_one.push_back(o);
    t_sym.push_back(s);
    t_one32.push_back(o32);
    t_sym32.push_back(s32);
    t_tf32.push_back(t);
    r_gemm.push_back(o / g);
    r_sym.push_back(s / o);
    r_32.push_back(o / o32);
    refined += st.refined;
    tightened += st.tightened;
  }
  {
    // Back to back, as a service answers them: other queries, then one query repeated (the
    // same shapes each time: what work that depends on a query's shape costs on the host).
    std::vector<double> other, same;
    for (std::size_t r = 1; r < reps + 1; ++r) {
      const QuerySet q = slice(qs, r % qs.size(), 1);
      other.push_back(seconds_of([&] { gpu->search(q, 10, one); }));
    }
    const QuerySet q0 = slice(qs, 0, 1);
    for (std::size_t r = 0; r < reps; ++r)
      same.push_back(seconds_of([&] { gpu->search(q0, 10, one); }));
    rep.add("single query back to back, one-sided (ms)", 1e3 * median(other), "ms");
    rep.add("single query repeated, one-sided (ms)", 1e3 * median(same), "ms");
  }
  const double per_query = static_cast<double>(std::max<std::size_t>(reps, 1));
  rep.add("single query: cuBLAS SGEMM of phase 1 (ms)", 1e3 * median(gemm), "ms");
  rep.add("single query: one-sided LC-RWMD top-10, " + prec + " (ms)", 1e3 * median(t_one), "ms");
  rep.add("single query: symmetric LC-RWMD top-10, pruned, " + prec + " (ms)", 1e3 * median(t_sym),
          "ms");
  rep.add("single query: one-sided LC-RWMD top-10, f32 (ms)", 1e3 * median(t_one32), "ms");
  rep.add("single query: symmetric LC-RWMD top-10, pruned, f32 (ms)", 1e3 * median(t_sym32), "ms");
  rep.add("single query: one-sided LC-RWMD top-10, TF32 GEMM, uncertified (ms)",
          1e3 * median(t_tf32), "ms");
  rep.add("ratio one-sided " + prec + " / f32 (median of per-query ratios)", median(r_32), "x");
  rep.add("ratio one-sided / SGEMM (median of per-query ratios)", median(r_gemm), "x");
  rep.add("ratio symmetric / one-sided (median of per-query ratios)", median(r_sym), "x");
  rep.add("single queries whose top-10 differs from f32's, bit for bit (of " +
              std::to_string(2 * (reps + 1)) + ")",
          static_cast<double>(differing), "");
  rep.add("symmetric: documents whose D2 was computed per query (mean)",
          static_cast<double>(refined) / per_query, "docs");
  rep.add("symmetric: documents whose bound was tightened per query (mean)",
          static_cast<double>(tightened) / per_query, "docs");
  {
    // The CPU backend's refinement of the same queries (its chunks: 32 documents per thread).
    const CpuSearcher cpu(ix);
    std::size_t cpu_refined = 0, cpu_tightened = 0;
    for (std::size_t r = 1; r < reps + 1; ++r) {
      SearchStats st;
      cpu.search(slice(qs, r % qs.size(), 1), 10, sym, &st);
      cpu_refined += st.refined;
      cpu_tightened += st.tightened;
    }
    rep.add("symmetric: the CPU backend's D2 computed per query, same queries",
            static_cast<double>(cpu_refined) / per_query, "docs");
    rep.add("symmetric: the CPU backend's bounds tightened per query, same queries",
            static_cast<double>(cpu_tightened) / per_query, "docs");
    rep.figure("d2_per_query", static_cast<double>(refined) / per_query);
    rep.figure("cpu_d2_per_query", static_cast<double>(cpu_refined) / per_query);
  }
  rep.figure("single_one_sided_ms", 1e3 * median(t_one));
  rep.figure("single_symmetric_ms", 1e3 * median(t_sym));
  rep.figure("single_one_sided_f32_ms", 1e3 * median(t_one32));
  rep.figure("single_symmetric_f32_ms", 1e3 * median(t_sym32));
  rep.figure("single_one_sided_tf32_ms", 1e3 * median(t_tf32));
  rep.figure("single_queries_differing_from_f32", static_cast<double>(differing));

  // Batched throughput (the best of two runs each; the first also warms the scratch), with
  // f32's beside it and its results compared.
  double best_qps[2] = {0, 0};
  std::size_t batch_differing = 0;
  for (std::size_t b : batches) {
    const QuerySet q = slice(qs, 0, b);
    for (bool symmetric : {false, true}) {
      const SearchOptions o = gpu_options(Method("lc-rwmd"), symmetric, b);
      double t = 1e30, t32 = 1e30;
      SearchStats st;
      SearchResults got, want;
      for (int r = 0; r < 2; ++r) {
        t = std::min(t, seconds_of([&] { got = gpu->search(q, 10, o, &st); }));
        t32 = std::min(t32, seconds_of([&] { want = f32.search(q, 10, o); }));
      }
      batch_differing += !identical(got, want);
      const double qps = static_cast<double>(q.size()) / t;
      const std::string name =
          "batch of " + std::to_string(q.size()) + (symmetric ? ", symmetric" : ", one-sided");
      rep.add(name + ", f32: queries/s", static_cast<double>(q.size()) / t32, "q/s");
      if (q.size() == 64)
        rep.figure(symmetric ? "batch64_symmetric_f32_qps" : "batch64_one_sided_f32_qps",
                   static_cast<double>(q.size()) / t32);
      rep.add(name + ", " + prec + ": queries/s", qps, "q/s");
      rep.add(name + ", " + prec + ": document distances/s", qps * n, "1/s");
      if (symmetric)
        rep.add(name + ": documents whose D2 was computed per query",
                static_cast<double>(st.refined) / static_cast<double>(q.size()), "docs");
      if (qps > best_qps[symmetric]) {
        best_qps[symmetric] = qps;
        rep.figure(symmetric ? "batch_symmetric_qps" : "batch_one_sided_qps", qps);
        rep.figure(symmetric ? "batch_symmetric_size" : "batch_one_sided_size",
                   static_cast<double>(q.size()));
      }
      if (q.size() == 64)
        rep.figure(symmetric ? "batch64_symmetric_qps" : "batch64_one_sided_qps", qps);
    }
  }
  rep.add("batches whose top-10 differs from f32's, bit for bit",
          static_cast<double>(batch_differing), "");
  rep.figure("batches_differing_from_f32", static_cast<double>(batch_differing));
  rep.add("all pairs n x n one-sided, extrapolated from the best batch (s)", n / best_qps[0], "s");
  rep.figure("all_pairs_one_sided_s", n / best_qps[0]);

  // TF32 against FP32 on one batch: rank-wise distance error and shared neighbours.
  {
    const QuerySet q = slice(qs, 0, std::min<std::size_t>(qs.size(), 64));
    const SearchOptions o = gpu_options(Method("lc-rwmd"), false, 64);
    const SearchResults exact = gpu->search(q, 10, o);
    gpu->set_allow_tf32(true);
    const SearchResults fast = gpu->search(q, 10, o);
    gpu->set_allow_tf32(false);
    double worst = 0, shared = 0;
    for (std::size_t i = 0; i < exact.distances.size(); ++i) {
      worst = std::max(worst, std::fabs(double{fast.distances[i]} - exact.distances[i]) /
                                  std::max(1e-12, double{exact.distances[i]}));
      const std::size_t row = i / exact.k;
      const auto* first = exact.indices.data() + row * exact.k;
      shared += std::find(first, first + exact.k, fast.indices[i]) != first + exact.k;
    }
    rep.add("TF32: largest relative error of a top-10 distance", worst, "");
    rep.add("TF32: share of the FP32 top-10 found",
            shared / static_cast<double>(exact.distances.size()), "");
  }

  // Phase 2 by NVIDIA's library on the same CSR (bench/gpu.sh sets our kernels' times, from
  // Nsight Compute, beside these).
  for (std::size_t nq : {std::size_t{1}, std::size_t{64}})
    rep.add("phase 2 by cuSPARSE SpMM, " + std::to_string(nq) + (nq == 1 ? " query" : " queries") +
                " (ms)",
            1e3 * time_cusparse_spmm(device, ix, nq, reps), "ms");

  // The paper's GPU baseline: quadratic RWMD, per pair, beside LC-RWMD's per pair.
  {
    const QuerySet q = slice(qs, 0, 1);
    const SearchOptions o = gpu_options(Method("rwmd"), true, 1);
    double t = 1e30;
    for (int r = 0; r < 2; ++r) t = std::min(t, seconds_of([&] { gpu->search(q, 10, o); }));
    const double lc_pair = median(t_sym) / n;
    rep.add("GPU quadratic RWMD, symmetric: per pair (us)", 1e6 * t / n, "us");
    rep.add("GPU symmetric LC-RWMD, single query: per pair (us)", 1e6 * lc_pair, "us");
    rep.add("quadratic / LC-RWMD per pair", t / n / lc_pair, "x");
  }
}

}  // namespace lcrwmd::bench
