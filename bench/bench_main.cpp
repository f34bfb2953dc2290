// lcrwmd_bench: the figures of BENCHMARKS.md, measured side by side in one process.
//
//   lcrwmd synth --preset set1 --output set1.idx --queries 300 --queries-output set1_q.tsv
//   lcrwmd_bench synthetic --index set1.idx --queries set1_q.tsv [--json out.json]
//   lcrwmd_bench real --embeddings cbow300.bin --stopwords stop_words.txt
//                     --train 20news/train.tsv.gz --test 20news/test.tsv.gz [--json out.json]
//   lcrwmd_bench emd --problems problems.bin    (written by bench/peers.py: POT's own problems)
//   lcrwmd_bench gpu --index set1.idx --queries set1_q.tsv [--json out.json]   (CUDA backend)
//   lcrwmd_bench act --index set1.idx --queries set1_q.tsv [--json out.json]   (ACT-k vs LC-RWMD)
//   lcrwmd_bench precision --index set1.idx --queries set1_q.tsv [--batches 64]  (CPU phase 1)
//   lcrwmd_bench precision --embeddings ... --train ... --test ... --bulk 7532
//   lcrwmd_bench directions --index set1.idx --queries set1_q.tsv [--words 5]  (a search box's)
//   lcrwmd_bench segments --index set1.idx --queries set1_q.tsv   (a grown collection's search)
//   lcrwmd_bench segments --embeddings ... --train ... --test ...
//   lcrwmd_bench writes --collection DIR --docs new.tsv   (a living collection's changes)
//
// Every time is the median over repetitions; ratios compare times taken in the same run.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_components.h"
#include "bench_directions.h"
#include "bench_gpu.h"
#include "bench_postings.h"
#include "bench_precision.h"
#include "bench_segments.h"
#include "bench_util.h"
#include "bench_writes.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/emd.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/topk.h"

namespace {

using namespace lcrwmd;
using namespace lcrwmd::bench;

// A corpus's training documents as the index and its test documents as queries (query words
// the index lacks from the embeddings).
struct Corpus {
  Index index;
  QuerySet queries;
};
Corpus load_corpus(const std::string& emb_path, const std::string& stop_path,
                   const std::string& train_path, const std::string& test_path) {
  const Embeddings emb = Embeddings::load(emb_path);
  StopWords stop;
  if (!stop_path.empty()) stop = StopWords::load(stop_path);
  BuildOptions bo;
  bo.stopwords = stop_path.empty() ? nullptr : &stop;
  Index ix = Index::from_data(build_index_data(emb, read_tsv(train_path), bo));
  QuerySet qs = make_query_set(ix, read_tsv(test_path), {&emb});
  return {std::move(ix), std::move(qs)};
}

// An index file and its queries, or a corpus (load_corpus) where no index is given; printed and
// named in the report's metadata.
Corpus index_or_corpus(const std::string& index_path, const std::string& queries_path,
                       const std::string& emb_path, const std::string& stop_path,
                       const std::string& train_path, const std::string& test_path,
                       std::map<std::string, std::string>& meta) {
  Corpus c = [&] {
    if (index_path.empty()) {
      meta["train"] = train_path;
      meta["test"] = test_path;
      return load_corpus(emb_path, stop_path, train_path, test_path);
    }
    meta["index"] = index_path;
    Index ix = Index::load(index_path, false);
    QuerySet qs = make_query_set(ix, read_tsv(queries_path), {});
    return Corpus{std::move(ix), std::move(qs)};
  }();
  std::printf("%zu documents, vocabulary %zu, dim %zu; %zu queries\n", c.index.n_docs(),
              c.index.vocab_size(), c.index.dim(), c.queries.size());
  return c;
}

// Single-query latency of one-sided and symmetric LC-RWMD beside the bare SGEMM, interleaved
// query by query so that machine noise hits all three alike.
// single_out: median one-sided and symmetric times.
void single_query(const Searcher& searcher, const QuerySet& qs, std::size_t reps, Report& rep,
                  double single_out[2]) {
  const Index& ix = searcher.index();
  std::vector<double> one, sym, gemm, ratio_gemm, ratio_sym;
  std::size_t refined = 0;
  for (std::size_t r = 0; r < reps + 1; ++r) {
    const QuerySet q = slice(qs, r % qs.size(), 1);
    const double g = bare_sgemm(ix, q.length(0));
    const double o = seconds_of([&] { searcher.search(q, 10, lc(false, 1)); });
    SearchStats st;
    const double s = seconds_of([&] { searcher.search(q, 10, lc(true, 1), &st); });
    if (r == 0) continue;  // warm-up: page cache, huge pages, BLAS buffers
    gemm.push_back(g);
    one.push_back(o);
    sym.push_back(s);
    ratio_gemm.push_back(o / g);
    ratio_sym.push_back(s / o);
    refined += st.refined;
  }
  rep.add("single query: bare SGEMM of phase 1 (ms)", 1e3 * median(gemm), "ms");
  rep.add("single query: one-sided LC-RWMD top-10 (ms)", 1e3 * median(one), "ms");
  rep.add("single query: symmetric LC-RWMD top-10, pruned (ms)", 1e3 * median(sym), "ms");
  rep.add("ratio one-sided / bare SGEMM (median of per-query ratios)", median(ratio_gemm), "x");
  rep.add("ratio symmetric / one-sided (median of per-query ratios)", median(ratio_sym), "x");
  rep.add("symmetric: documents needing D2 per query (mean)",
          static_cast<double>(refined) / static_cast<double>(reps), "docs");
  single_out[0] = median(one);
  single_out[1] = median(sym);
}

void batched(const Searcher& searcher, const QuerySet& qs, std::size_t batch,
             const double single[2], Report& rep, const std::string& tag) {
  const QuerySet q = slice(qs, 0, batch);
  for (bool symmetric : {false, true}) {
    std::vector<double> t;
    for (int r = 0; r < 2; ++r)
      t.push_back(seconds_of([&] { searcher.search(q, 10, lc(symmetric, batch)); }));
    const double per_query = std::min(t[0], t[1]) / static_cast<double>(q.size());
    const std::string name =
        tag + "batch of " + std::to_string(q.size()) + (symmetric ? ", symmetric" : ", one-sided");
    rep.add(name + ": per query (ms)", 1e3 * per_query, "ms");
    rep.add(name + ": queries/s", 1.0 / per_query, "q/s");
    rep.add(name + ": per query / single query", per_query / single[symmetric], "x");
  }
}

void quadratic_vs_lc(const Index& ix, const QuerySet& qs, double one_sided, Report& rep) {
  // Quadratic RWMD over a sample of documents: its cost per pair does not depend on n.
  const std::size_t sample = std::min<std::size_t>(ix.n_docs(), 4000);
  const Index small = ix.shard(0, sample);
  const QuerySet q = slice(qs, 0, 1);
  SearchOptions o;
  o.method = Method("rwmd");
  const double quad = seconds_of([&] { search(small, q, 10, o); }) / static_cast<double>(sample);
  const double lcp = one_sided / static_cast<double>(ix.n_docs());
  rep.add("quadratic RWMD: time per document pair (us)", 1e6 * quad, "us");
  rep.add("LC-RWMD one-sided: time per document pair (us)", 1e6 * lcp, "us");
  rep.add("quadratic / LC-RWMD per pair", quad / lcp, "x");
}

// ACT-k beside LC-RWMD, one-sided and symmetric top-10: single queries interleaved (the four
// searches of one query back to back), then batches, each batch size measured side by side.
void act_vs_lc(const Searcher& searcher, const QuerySet& qs, std::size_t reps, std::size_t steps,
               const std::vector<std::size_t>& batches, Report& rep) {
  const auto act = [&](bool symmetric, std::size_t batch) {
    SearchOptions o = lc(symmetric, batch);
    o.method = Method("act");
    o.parameters.set("act_steps", static_cast<double>(steps));
    return o;
  };
  const std::string name = "ACT-" + std::to_string(steps);
  for (std::size_t batch : batches) {
    const std::size_t size = std::min(batch, qs.size());
    const std::string tag =
        size == 1 ? "single query" : "batch of " + std::to_string(size) + ", per query";
    const std::size_t rounds = size == 1 ? reps + 1 : 3;
    std::vector<double> t[2][2], ratio[2];  // [symmetric][act]
    for (std::size_t r = 0; r < rounds; ++r) {
      const QuerySet q = slice(qs, size == 1 ? r % qs.size() : 0, size);
      double s[2][2];
      for (int sym = 0; sym < 2; ++sym) {
        s[sym][0] = seconds_of([&] { searcher.search(q, 10, lc(sym, size)); });
        s[sym][1] = seconds_of([&] { searcher.search(q, 10, act(sym, size)); });
      }
      if (r == 0) continue;  // warm-up
      for (int sym = 0; sym < 2; ++sym) {
        for (int a = 0; a < 2; ++a) t[sym][a].push_back(s[sym][a] / static_cast<double>(size));
        ratio[sym].push_back(s[sym][1] / s[sym][0]);
      }
    }
    for (int sym = 0; sym < 2; ++sym) {
      const std::string mode = sym ? "symmetric" : "one-sided";
      rep.add(tag + ": " + mode + " LC-RWMD top-10 (ms)", 1e3 * median(t[sym][0]), "ms");
      rep.add(tag + ": " + mode + " " + name + " top-10 (ms)", 1e3 * median(t[sym][1]), "ms");
      rep.add(tag + ": " + mode + " " + name + " / LC-RWMD (median of paired ratios)",
              median(ratio[sym]), "x");
    }
  }
}

std::map<std::string, std::string> machine_meta() {
  std::map<std::string, std::string> m;
  m["threads"] = std::to_string(omp_get_max_threads());
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lcrwmd benchmarks (tables on stdout, JSON with --json)"};
  app.require_subcommand(1);
  std::string json;
  std::size_t reps = 7;
  int threads = 0;
  app.add_option("--json", json, "Also write the results as JSON");
  app.add_option("--reps", reps, "Repetitions per measurement (median reported)");
  app.add_option("--threads", threads, "Threads (default: all cores)");
  SearcherOptions so;
  app.add_option("--tile-rows", so.cpu.tile_rows, "Phase-1 tile rows (0: default)");
  app.add_option("--tile-words", so.cpu.tile_words, "Phase-1 tile query words (0: default)");
  std::string precision = "auto";
  app.add_option("--precision", precision, "CPU phase 1: auto | f32 | bf16 | int8");
  std::string backend = "cpu";
  app.add_option("--backend", backend,
                 "synthetic/real: cpu | cuda | auto (one searcher, kept for every search)");

  auto* syn = app.add_subcommand("synthetic", "Set-1/Set-2 shapes from 'lcrwmd synth'");
  std::string index_path, queries_path;
  std::vector<std::size_t> batches = {64, 256};
  syn->add_option("--index", index_path, "Index from lcrwmd synth")->required();
  syn->add_option("--queries", queries_path, "Queries TSV from lcrwmd synth")->required();
  syn->add_option("--batches", batches, "Batch sizes for throughput");

  auto* real = app.add_subcommand("real", "A real corpus: test documents against train");
  std::string emb_path, stop_path, train_path, test_path;
  std::size_t batch = 256;
  real->add_option("--embeddings", emb_path)->required();
  real->add_option("--stopwords", stop_path);
  real->add_option("--train", train_path)->required();
  real->add_option("--test", test_path)->required();
  real->add_option("--batch", batch, "Queries in the batch")->capture_default_str();

  auto* gpu_cmd = app.add_subcommand("gpu", "The CUDA backend on Set-1/Set-2 shapes");
  std::vector<std::size_t> gpu_batches = {64, 256, 1024, 4096};
  int device = 0;
  gpu_cmd->add_option("--index", index_path, "Index from lcrwmd synth")->required();
  gpu_cmd->add_option("--queries", queries_path, "Queries TSV from lcrwmd synth")->required();
  gpu_cmd->add_option("--batches", gpu_batches, "Batch sizes for throughput");
  gpu_cmd->add_option("--device", device, "CUDA device");

  auto* act_cmd = app.add_subcommand("act", "ACT-k beside LC-RWMD on Set-1/Set-2 shapes");
  std::size_t act_steps = 1;
  std::vector<std::size_t> act_batches = {1, 64};
  act_cmd->add_option("--index", index_path, "Index from lcrwmd synth")->required();
  act_cmd->add_option("--queries", queries_path, "Queries TSV from lcrwmd synth")->required();
  act_cmd->add_option("--act-steps", act_steps, "k")->capture_default_str();
  act_cmd->add_option("--batches", act_batches, "Batch sizes (1: single queries)");

  auto* prec_cmd =
      app.add_subcommand("precision", "CPU phase 1 in f32, bf16 and int8, side by side");
  PrecisionRun prun;
  std::vector<std::size_t> prec_batches = {64};
  bool no_single = false;
  prec_cmd->add_option("--index", index_path, "Index (from lcrwmd synth or build)");
  prec_cmd->add_option("--queries", queries_path, "Queries TSV for --index");
  prec_cmd->add_option("--embeddings", emb_path, "Or a corpus: embeddings");
  prec_cmd->add_option("--stopwords", stop_path);
  prec_cmd->add_option("--train", train_path, "Or a corpus: training documents (the index)");
  prec_cmd->add_option("--test", test_path, "Or a corpus: test documents (the queries)");
  prec_cmd->add_option("--batches", prec_batches, "Batch sizes (none: --batches 0)");
  prec_cmd->add_option("--bulk", prun.bulk,
                       "Queries for the defaults against f32 in batches of 64 (0: none)");
  prec_cmd->add_flag("--no-single", no_single, "Skip the single-query timings");

  auto* dir_cmd = app.add_subcommand(
      "directions", "Short queries query-to-document beside one-sided and symmetric LC-RWMD");
  std::size_t words = 5;
  std::vector<std::size_t> dir_batches = {64};
  dir_cmd->add_option("--index", index_path, "Index (from lcrwmd synth or build)")->required();
  dir_cmd->add_option("--queries", queries_path, "Queries TSV for --index")->required();
  dir_cmd->add_option("--words", words, "Words kept of each query (0: as typed)")
      ->capture_default_str();
  dir_cmd->add_option("--batches", dir_batches, "Batch sizes (none: --batches 0)");
  std::size_t warm_up = 1;
  dir_cmd->add_option("--warm-up", warm_up, "Queries run untimed first")->capture_default_str();
  std::string dir_weights = "index";
  dir_cmd
      ->add_option("--query-weights", dir_weights,
                   "index: as the index weighs its documents, every method alike; idf: TF-IDF, "
                   "as the command line weighs query-to-document and hybrid queries")
      ->check(CLI::IsMember({"index", "idf"}))
      ->capture_default_str();
  std::string dir_queries_out;
  dir_cmd->add_option("--queries-output", dir_queries_out,
                      "Also write the queries as timed (their words kept) as TSV text, for a peer");

  auto* seg_cmd = app.add_subcommand(
      "segments", "A grown collection's segments searched beside one index of their documents");
  SegmentsRun srun;
  seg_cmd->add_option("--index", index_path, "Index (from lcrwmd synth or build)");
  seg_cmd->add_option("--queries", queries_path, "Queries TSV for --index");
  seg_cmd->add_option("--embeddings", emb_path, "Or a corpus: embeddings");
  seg_cmd->add_option("--stopwords", stop_path);
  seg_cmd->add_option("--train", train_path, "Or a corpus: training documents (the index)");
  seg_cmd->add_option("--test", test_path, "Or a corpus: test documents (the queries)");
  seg_cmd->add_option("--adds", srun.adds, "The newest documents, each added alone")
      ->capture_default_str();
  seg_cmd->add_option("--single", srun.single, "Queries timed one at a time")
      ->capture_default_str();
  seg_cmd->add_option("--batch", srun.batch, "Queries timed as one batch (0: none)")
      ->capture_default_str();

  auto* writes_cmd = app.add_subcommand(
      "writes", "A living collection's changes: an add, a delete, a lookup by id, their refreshes");
  WritesRun wrun;
  writes_cmd->add_option("--collection", wrun.collection, "Collection directory (changed)")
      ->required();
  writes_cmd->add_option("--docs", wrun.docs, "TSV of documents with new ids to add")->required();
  writes_cmd->add_option("--single", wrun.single, "Single adds and deletes timed")
      ->capture_default_str();
  writes_cmd->add_option("--bulk", wrun.bulk, "Documents of the one large add (0: none)")
      ->capture_default_str();

  auto* post_cmd = app.add_subcommand(
      "postings",
      "An index's posting lists in its file's blocks beside bit-packing and plain arrays");
  post_cmd->add_option("--index", index_path, "Index with terms (lcrwmd build)")->required();

  auto* merge_cmd = app.add_subcommand("merge", "The top-k merge of a distributed search");

  auto* emd_cmd = app.add_subcommand("emd", "Exact EMD on problems from bench/peers.py");
  std::string problems_path;
  emd_cmd->add_option("--problems", problems_path, "Binary problem file")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    set_threads(threads);
    so.backend = parse_backend(backend);
    so.cpu.precision = parse_precision(precision);
    Report rep;
    auto meta = machine_meta();
    if (*emd_cmd) {
      emd_problems(problems_path, rep);
    } else if (*dir_cmd) {
      const Index ix = Index::load(index_path, false);
      const bool idf = dir_weights == "idf";
      QueryOptions weighs;
      weighs.weights = idf ? QueryWeights::idf : QueryWeights::index;
      const QuerySet qs =
          short_queries(ix, make_query_set(ix, read_tsv(queries_path), weighs), words, idf);
      if (!dir_queries_out.empty()) write_query_text(qs, dir_queries_out);
      meta["index"] = index_path;
      meta["n_docs"] = std::to_string(ix.n_docs());
      meta["query_words"] = std::to_string(words);
      meta["query_weights"] = dir_weights;
      std::vector<std::size_t> bs;
      for (std::size_t b : dir_batches)
        if (b) bs.push_back(b);
      direction_benchmarks(*make_searcher(ix, so), qs, reps, warm_up, bs, rep);
    } else if (*seg_cmd) {
      const Corpus c = index_or_corpus(index_path, queries_path, emb_path, stop_path, train_path,
                                       test_path, meta);
      srun.reps = reps;
      segment_benchmarks(c.index, c.queries, so, srun, rep);
    } else if (*writes_cmd) {
      meta["collection"] = wrun.collection;
      write_benchmarks(wrun, rep);
    } else if (*post_cmd) {
      const Index ix = Index::load(index_path, false);
      meta["index"] = index_path;
      meta["n_docs"] = std::to_string(ix.n_docs());
      posting_benchmarks(ix, reps, rep);
    } else if (*merge_cmd) {
      merge_cost(reps, rep);
    } else if (*gpu_cmd) {
      const Index ix = Index::load(index_path, false);
      const QuerySet qs = make_query_set(ix, read_tsv(queries_path), {});
      meta["index"] = index_path;
      meta["n_docs"] = std::to_string(ix.n_docs());
      gpu_benchmarks(ix, qs, device, reps, gpu_batches, rep, meta);
    } else if (*act_cmd) {
      const Index ix = Index::load(index_path, false);
      const QuerySet qs = make_query_set(ix, read_tsv(queries_path), {});
      meta["index"] = index_path;
      meta["n_docs"] = std::to_string(ix.n_docs());
      const auto searcher = make_searcher(ix, so);
      act_vs_lc(*searcher, qs, reps, act_steps, act_batches, rep);
    } else if (*prec_cmd) {
      const Corpus c = index_or_corpus(index_path, queries_path, emb_path, stop_path, train_path,
                                       test_path, meta);
      prun.reps = reps;
      prun.single = !no_single;
      for (std::size_t b : prec_batches)
        if (b) prun.batches.push_back(b);
      const std::size_t rss0 = status_kib("VmRSS:");
      precision_benchmarks(c.index, c.queries, prun, rep);
      rep.add("peak resident memory of this process beyond the index (MiB)",
              static_cast<double>(status_kib("VmHWM:") - rss0) / 1024, "MiB");
    } else if (*syn) {
      const std::size_t rss0 = status_kib("VmRSS:");
      const Index ix = Index::load(index_path, false);
      const QuerySet qs = make_query_set(ix, read_tsv(queries_path), {});
      std::printf("%s: %zu documents, vocabulary %zu, dim %zu, %.1f words/doc, %zu queries\n",
                  index_path.c_str(), ix.n_docs(), ix.vocab_size(), ix.dim(),
                  static_cast<double>(ix.nnz()) / static_cast<double>(ix.n_docs()), qs.size());
      meta["index"] = index_path;
      meta["n_docs"] = std::to_string(ix.n_docs());
      meta["vocab_size"] = std::to_string(ix.vocab_size());
      double single[2] = {0, 0};
      const auto searcher = make_searcher(ix, so);
      single_query(*searcher, qs, reps, rep, single);
      quadratic_vs_lc(ix, qs, single[0], rep);
      for (std::size_t b : batches) batched(*searcher, qs, b, single, rep, "");
      const double file_mib = static_cast<double>(ix.file_bytes()) / (1 << 20);
      rep.add("index file (MiB)", file_mib, "MiB");
      rep.add("peak resident memory of this process (MiB)",
              static_cast<double>(status_kib("VmHWM:") - rss0) / 1024, "MiB");
    } else {
      const Corpus c = load_corpus(emb_path, stop_path, train_path, test_path);
      const Index& ix = c.index;
      const QuerySet& qs = c.queries;
      std::printf("%s: %zu documents, vocabulary %zu; %zu test queries\n", train_path.c_str(),
                  ix.n_docs(), ix.vocab_size(), qs.size());
      meta["train"] = train_path;
      meta["test"] = test_path;
      double single[2] = {0, 0};
      const auto searcher = make_searcher(ix, so);
      single_query(*searcher, qs, std::max<std::size_t>(reps, 31), rep, single);
      batched(*searcher, qs, batch, single, rep, "real ");
    }
    rep.write_json(json, meta);
  } catch (const Error& e) {
    std::fprintf(stderr, "lcrwmd_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
