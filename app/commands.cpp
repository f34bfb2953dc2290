#include "app/commands.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "app/cluster.h"
#include "app/distributed.h"
#include "app/json_out.h"
#include "app/query_input.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/npy_writer.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/synth.h"

namespace lcrwmd::app {
namespace {

void run_build(const std::string& emb_path, const std::string& docs, const std::string& stop_path,
               const std::string& weighting, bool keep_text, const std::string& output) {
  auto t = Clock::now();
  std::vector<RawDocument> documents = read_tsv(docs);
  // Only the vectors of the corpus's words are kept: memory follows the corpus, not the file.
  const WordSet tokens = distinct_tokens(documents);
  const Embeddings emb = Embeddings::load(emb_path, &tokens);
  note("embeddings %s: %zu of its %zu words kept (the corpus's), dim %zu, %s%s (%.2f s)",
       emb_path.c_str(), emb.size(), emb.file_words(), emb.dim(), emb.format().c_str(),
       emb.duplicates()
           ? (", " + std::to_string(emb.duplicates()) + " duplicate words skipped").c_str()
           : "",
       since(t));
  StopWords stop;
  if (!stop_path.empty()) stop = StopWords::load(stop_path);
  BuildOptions bo;
  bo.stopwords = stop_path.empty() ? nullptr : &stop;
  bo.weighting = parse_weighting(weighting);
  bo.keep_text = keep_text;
  TextReport report;
  const IndexData data = build_index_data(emb, documents, bo, &report);
  report_text(report, "documents");
  Index::save(data, output);
  note("index %s: %zu documents, %zu words, %zu nonzeros (%.2f s)", output.c_str(), data.ids.size(),
       data.vocab.size(), data.indices.size(), since(t));
}

}  // namespace

void add_build(CLI::App& app) {
  auto* c = app.add_subcommand("build", "Build an index from embeddings and documents");
  struct Flags {
    std::string embeddings, docs, stopwords, weighting = "tf", output;
    bool no_text = false;
  };
  auto f = std::make_shared<Flags>();
  c->add_option("--embeddings", f->embeddings,
                "word2vec binary, or word2vec/GloVe/fastText text embeddings")
      ->required();
  c->add_option("--docs", f->docs, "Documents: TSV id<TAB>label<TAB>text (.gz ok)")->required();
  c->add_option("--stopwords", f->stopwords,
                "Stop-word file, one word per line (recorded: queries are read with them too)");
  c->add_option("--weighting", f->weighting, "tf (L1-normalised counts) | tfidf")
      ->check(CLI::IsMember({"tf", "tfidf"}))
      ->capture_default_str();
  c->add_option("--output", f->output, "Index file to write")->required();
  c->add_flag("--no-text", f->no_text,
              "Leave the documents' texts out (kept compressed by default, for display)");
  c->callback([f] {
    run_build(f->embeddings, f->docs, f->stopwords, f->weighting, !f->no_text, f->output);
  });
}

// Top-k as TSV query_id, rank, doc_id, distance; to stdout, or atomically to `file` (made
// before the search, so that an unwritable path fails before any work).
void write_results(const SearchResults& r, const Loaded& l, bool with_text,
                   std::unique_ptr<AtomicFile> file) {
  // Written one query at a time: with a large --k the results need not fit in memory twice.
  std::string out;
  char buf[64];
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    out.clear();
    for (std::size_t j = 0; j < r.k; ++j) {
      const std::int64_t doc = r.indices[q * r.k + j];
      if (doc < 0) continue;
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(r.distances[q * r.k + j]));
      out += l.queries.ids[q];
      out += '\t';
      out += std::to_string(j + 1);
      out += '\t';
      out += l.index.doc_id(static_cast<std::size_t>(doc));
      out += '\t';
      out += buf;
      if (with_text) {  // one line per neighbour: the text's tabs and line breaks as spaces
        std::string text = l.index.text(static_cast<std::size_t>(doc));
        std::replace_if(
            text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; },
            ' ');
        out += '\t';
        out += text;
      }
      out += '\n';
    }
    if (file)
      file->write(out);
    else if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size())
      throw Error("cannot write results to stdout");
  }
  if (file) file->commit();
  if (!file && std::fflush(stdout) != 0) throw Error("cannot write results to stdout");
}

void add_search(CLI::App& app) {
  auto* c = app.add_subcommand("search", "Top-k nearest documents for each query");
  auto f = std::make_shared<QueryFlags>();
  auto k = std::make_shared<std::size_t>(10);
  auto output = std::make_shared<std::string>();
  auto with_text = std::make_shared<bool>(false);
  f->add(c);
  f->add_prune(c);
  c->add_option("--k", *k, "Neighbours per query (more than the index holds: all)")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--output", *output, "TSV query_id, rank, doc_id, distance (default: stdout)");
  c->add_flag("--with-text", *with_text,
              "A fifth column: each neighbour's text (kept in the index unless built with "
              "--no-text)");
  f->add_distribute(c, "docs");
  c->callback([f, k, output, with_text] {
    Cluster& cluster = Cluster::current();
    std::unique_ptr<AtomicFile> file;
    cluster.step([&] {
      if (cluster.root() && !output->empty()) file = std::make_unique<AtomicFile>(*output);
    });
    Loaded l = load_queries(*f);
    if (*with_text && !l.index.has_text())
      throw Error("--with-text: " + f->index + " holds no texts (built with --no-text)");
    const SearchOptions o = f->options();
    auto t = Clock::now();
    const DistributedSearcher searcher(cluster, l.index, f->searcher_options(),
                                       parse_layout(f->distribute));
    SearchStats st;
    ExchangeTimes times;
    const SearchResults r = searcher.search(l.queries, *k, o, &st, &times);
    note("search: %zu queries x %zu documents, %s, %.3f s (%zu batches, %s)", r.n_queries,
         l.index.n_docs(), describe(o).c_str(), since(t), st.batches,
         describe_backend(searcher.options(), st).c_str());
    if (cluster.size() > 1)
      note("  %d ranks: own part %.4f s, waiting for the others %.4f s, gather + merge %.4f s",
           cluster.size(), times.local, times.waiting, times.exchange);
    report_refinement(o, st);
    cluster.step([&] {
      if (cluster.root()) write_results(r, l, *with_text, std::move(file));
    });
  });
}

void add_pairwise(CLI::App& app) {
  auto* c = app.add_subcommand("pairwise", "Full query x document distance matrix as .npy");
  auto f = std::make_shared<QueryFlags>();
  auto output = std::make_shared<std::string>();
  auto row_ids = std::make_shared<std::string>();
  f->add(c);
  c->add_option("--output", *output, "float32 .npy file, queries x documents")->required();
  c->add_option("--row-ids", *row_ids,
                "Also write the query id of each row, one per line (queries with no known "
                "word have no row)");
  // Under mpirun each rank computes a contiguous part of the queries and writes its rows into
  // rank 0's temporary output file (which must be on a file system every rank sees).
  c->callback([f, output, row_ids] {
    Cluster& cluster = Cluster::current();
    Loaded l = load_queries(*f);
    auto t = Clock::now();
    const std::size_t n = l.index.n_docs();
    const SearchOptions o = f->options();
    const SearcherOptions so = for_rank(cluster, f->searcher_options());
    std::unique_ptr<NpyWriter> npy;
    std::string temp;
    cluster.step([&] {
      if (!cluster.root()) return;
      npy = std::make_unique<NpyWriter>(*output, l.queries.size(), n);
      temp = std::to_string(npy->data_offset()) + '\n' + npy->temp_path();
    });
    cluster.broadcast(temp);
    const std::size_t offset = std::stoul(temp.substr(0, temp.find('\n')));
    temp.erase(0, temp.find('\n') + 1);
    const Part mine = part_of(l.queries.size(), cluster.rank(), cluster.size());
    SearchStats st;
    cluster.step([&] {
      make_searcher(l.index, so)
          ->pairwise(
              subset(l.queries, mine.begin, mine.end), o,
              [&](std::size_t first, std::size_t rows, const float* d) {
                if (cluster.root())  // rank 0's rows come first: appended in order
                  npy->append_rows(d, rows);
                else
                  write_npy_rows(temp, offset, n, mine.begin + first, d, rows);
              },
              &st);
    });
    cluster.step([&] {
      if (!cluster.root()) return;
      npy->rows_written_elsewhere(l.queries.size() - mine.size());
      if (!row_ids->empty()) {
        AtomicFile ids(*row_ids);
        for (const std::string& id : l.queries.ids) ids.write(id + "\n");
        ids.commit();
      }
      npy->commit();
    });
    note("pairwise: %zu x %zu matrix written to %s (%.3f s, %s)", l.queries.size(), n,
         output->c_str(), since(t), describe_backend(so, st).c_str());
  });
}

void add_embeddings(CLI::App& app) {
  auto* c =
      app.add_subcommand("embeddings",
                         "Index an embeddings file once, so that builds and searches read only the "
                         "words they need");
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  c->add_option("--input", *input, "word2vec binary, or word2vec/GloVe/fastText text embeddings")
      ->required();
  c->add_option("--output", *output,
                "Indexed embeddings file: give it as --embeddings to build, search, serve...")
      ->required();
  c->callback([input, output] {
    const auto t = Clock::now();
    const std::size_t words = Embeddings::write_indexed(*input, *output);
    note("embeddings %s: %zu words indexed into %s (%.2f s)", input->c_str(), words,
         output->c_str(), since(t));
  });
}

void add_info(CLI::App& app) {
  auto* c = app.add_subcommand("info", "Sizes and memory of an index");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  c->add_option("--index", *path, "Index file")->required();
  c->add_flag("--json", *json, "Machine-readable output");
  c->callback([path, json] {
    const Index ix = Index::load(*path, true);
    const double n = static_cast<double>(ix.n_docs());
    const std::size_t csr = ix.nnz() * 8 + (ix.n_docs() + 1) * 8;
    const std::size_t vec = ix.vocab_size() * ix.dim() * 4;
    // Working memory of one query of the mean length beyond the mapped index (LC-RWMD).
    const double h = n > 0 ? static_cast<double>(ix.nnz()) / n : 0.0;
    const auto words = static_cast<std::size_t>(std::lround(h));
    SearchOptions o;
    o.symmetric = false;
    const std::size_t one_sided = cpu_query_bytes(ix, o, words);
    o.symmetric = true;
    const std::size_t symmetric = cpu_query_bytes(ix, o, words);
    const std::vector<std::string> stop = ix.stopwords().sorted();
    char fingerprint[19];
    std::snprintf(fingerprint, sizeof fingerprint, "%016llx",
                  static_cast<unsigned long long>(ix.embeddings_fingerprint()));
    if (*json) {
      const nlohmann::json j = {{"path", *path},
                                {"n_docs", ix.n_docs()},
                                {"vocab_size", ix.vocab_size()},
                                {"dim", ix.dim()},
                                {"nnz", ix.nnz()},
                                {"mean_words_per_doc", h},
                                {"weighting", to_string(ix.weighting())},
                                {"tokenizer_version", ix.tokenizer_version()},
                                {"stopwords", stop},
                                {"embeddings_fingerprint", fingerprint},
                                {"has_text", ix.has_text()},
                                {"text_bytes", ix.text_bytes()},
                                {"file_bytes", ix.file_bytes()},
                                {"csr_bytes", csr},
                                {"vector_bytes", vec},
                                {"query_bytes_one_sided", one_sided},
                                {"query_bytes_symmetric", symmetric}};
      std::printf("%s\n", to_bytes(j).c_str());
    } else {
      std::string stop_list;
      for (std::size_t i = 0; i < stop.size() && i < 8; ++i) stop_list += (i ? ", " : "") + stop[i];
      if (stop.size() > 8) stop_list += ", ...";
      std::printf("index        %s (checksum ok)\n", path->c_str());
      std::printf("documents    %zu\n", ix.n_docs());
      std::printf("vocabulary   %zu words (compacted)\n", ix.vocab_size());
      std::printf("dimension    %zu\n", ix.dim());
      std::printf("nonzeros     %zu (%.1f distinct words per document)\n", ix.nnz(), h);
      std::printf("weighting    %s (document frequencies kept for queries)\n",
                  to_string(ix.weighting()));
      std::printf("tokenizer    version %u\n", ix.tokenizer_version());
      std::printf("stop words   %zu%s%s (applied to queries too)\n", stop.size(),
                  stop.empty() ? "" : ": ", stop_list.c_str());
      std::printf(
          "embeddings   fingerprint %s (its words' vectors; --embeddings at query time "
          "must match)\n",
          fingerprint);
      if (ix.has_text())
        std::printf("texts        kept, %.1f MiB compressed\n",
                    static_cast<double>(ix.text_bytes()) / (1 << 20));
      else
        std::printf("texts        not kept (built with --no-text)\n");
      std::printf("file         %.1f MiB (histograms %.1f MiB, vectors %.1f MiB)\n",
                  static_cast<double>(ix.file_bytes()) / (1 << 20),
                  static_cast<double>(csr) / (1 << 20), static_cast<double>(vec) / (1 << 20));
      std::printf("per query    %.1f MiB one-sided, %.1f MiB symmetric (LC-RWMD working memory)\n",
                  static_cast<double>(one_sided) / (1 << 20),
                  static_cast<double>(symmetric) / (1 << 20));
    }
  });
}

void add_devices(CLI::App& app) {
  auto* c = app.add_subcommand("devices", "The CPU's kernels and the CUDA GPUs this build can use");
  c->callback([] {
    std::printf("cpu\t%s kernels\t%d threads\n", cpu_simd_level(), omp_get_max_threads());
    // Phase 1's precisions: what auto takes, and each one this CPU runs (or what it lacks).
    std::printf("phase 1\tauto: %s\n", describe_precision(Precision::automatic).c_str());
    for (Precision p : {Precision::f32, Precision::bf16, Precision::int8}) {
      try {
        std::printf("phase 1\t%s\n", describe_precision(p).c_str());
      } catch (const Error& e) {
        std::printf("phase 1\t%s\n", e.what());
      }
    }
    if (!built_with_cuda()) {
      std::printf("built without CUDA: the cpu backend only\n");
      return;
    }
    const std::vector<GpuDevice> devices = gpu_devices();
    if (devices.empty())
      std::printf("no CUDA device found (no GPU or no driver): --backend auto runs on the cpu\n");
    for (const GpuDevice& d : devices)
      std::printf("%d\t%s\tcompute %d.%d\t%zu MiB (%zu MiB free)\n", d.id, d.name.c_str(),
                  d.compute_major, d.compute_minor, d.total_bytes >> 20, d.free_bytes >> 20);
  });
}

void add_synth(CLI::App& app) {
  auto* c = app.add_subcommand("synth", "Synthetic index with the paper's shapes (Zipf words)");
  struct Flags {
    SynthOptions o;
    std::string preset, output, queries_output, embeddings_output, docs_output;
  };
  auto f = std::make_shared<Flags>();
  c->add_option("--preset", f->preset,
                "set1 (1M docs, h=107.5, v=452,058) | set2 (2.8M, 27.5, 292,492)")
      ->check(CLI::IsMember({"set1", "set2"}));
  auto* docs = c->add_option("--docs", f->o.docs, "Documents")->check(at_least_one());
  auto* vocab = c->add_option("--vocab", f->o.vocab, "Vocabulary size before compaction")
                    ->check(at_least_one());
  auto* h = c->add_option("--words-per-doc", f->o.words_per_doc, "Mean distinct words per document")
                ->check(CLI::Range(1.0, 1e6));
  auto* dim = c->add_option("--dim", f->o.dim, "Vector dimension")->check(at_least_one());
  c->add_option("--seed", f->o.seed, "Random seed")->capture_default_str();
  c->add_option("--output", f->output, "Index file to write")->required();
  c->add_option("--queries", f->o.queries, "Query documents to draw as well");
  c->add_option("--queries-output", f->queries_output, "TSV file for the queries");
  c->add_option("--embeddings-output", f->embeddings_output,
                "Also write the embeddings as word2vec text (small sizes)");
  c->add_option("--docs-output", f->docs_output, "Also write the documents as TSV (small sizes)");
  c->callback([=] {
    SynthOptions o = f->o;
    if (!f->preset.empty()) {
      SynthOptions p = synth_preset(f->preset);
      if (!*docs) o.docs = p.docs;
      if (!*vocab) o.vocab = p.vocab;
      if (!*h) o.words_per_doc = p.words_per_doc;
      if (!*dim) o.dim = p.dim;
    }
    if (o.queries > 0 && f->queries_output.empty())
      throw Error("synth: --queries needs --queries-output");
    auto t = Clock::now();
    note("synth: generating %zu documents over %zu words, dim %zu", o.docs, o.vocab, o.dim);
    SynthCorpus s = synthesize(o);
    note("synth: %zu documents, %zu words (of %zu), %zu nonzeros, generated in %.2f s",
         s.index.ids.size(), s.index.vocab.size(), o.vocab, s.index.indices.size(), since(t));
    Index::save(s.index, f->output);
    if (!f->queries_output.empty()) {
      AtomicFile q(f->queries_output);
      for (const RawDocument& d : s.queries) q.write(d.id + "\t\t" + d.text + "\n");
      q.commit();
    }
    if (!f->embeddings_output.empty()) {
      AtomicFile e(f->embeddings_output);
      const IndexData& d = s.index;
      e.write(std::to_string(d.vocab.size()) + " " + std::to_string(d.dim) + "\n");
      char buf[32];
      for (std::size_t u = 0; u < d.vocab.size(); ++u) {
        std::string line = d.vocab[u];
        for (std::size_t k = 0; k < d.dim; ++k) {
          std::snprintf(buf, sizeof buf, " %.9g", static_cast<double>(d.vectors[u * d.dim + k]));
          line += buf;
        }
        e.write(line + "\n");
      }
      e.commit();
    }
    if (!f->docs_output.empty()) {
      // Counts are recovered from the weights: each document's smallest weight is one count.
      AtomicFile out(f->docs_output);
      const IndexData& d = s.index;
      for (std::size_t i = 0; i < d.ids.size(); ++i) {
        float least = 1;
        for (std::uint64_t p = d.indptr[i]; p < d.indptr[i + 1]; ++p)
          least = std::min(least, d.values[p]);
        std::string text;
        for (std::uint64_t p = d.indptr[i]; p < d.indptr[i + 1]; ++p) {
          const long reps = std::lround(d.values[p] / least);
          for (long r = 0; r < reps; ++r) text += d.vocab[d.indices[p]] + " ";
        }
        out.write(d.ids[i] + "\t\t" + text + "\n");
      }
      out.commit();
    }
    note("synth: wrote %s (%.2f s)", f->output.c_str(), since(t));
  });
}

}  // namespace lcrwmd::app
