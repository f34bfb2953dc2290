// lcrwmd build, embeddings and synth: the commands that make index files.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/query_input.h"
#include "app/vectors.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"
#include "lcrwmd/metric.h"
#include "lcrwmd/synth.h"

namespace lcrwmd::app {
namespace {

// Shard i of a build written to `output`: corpus.idx -> corpus.0.idx, corpus.1.idx, ...
std::string shard_path(const std::string& output, std::size_t i) {
  const std::string ext = ".idx";
  const bool idx = output.size() > ext.size() && output.ends_with(ext);
  const std::string stem = idx ? output.substr(0, output.size() - ext.size()) : output;
  return stem + "." + std::to_string(i) + (idx ? ext : "");
}

// The index file, or its shards (each written whole, temporary then rename, before the next).
void save(const IndexData& data, const std::string& output, std::size_t shards,
          Clock::time_point t) {
  if (shards <= 1) {
    Index::save(data, output);
    note("index %s: %zu documents, %zu words, %zu nonzeros (%.2f s)", output.c_str(),
         data.ids.size(), data.vocab.size(), data.indices.size(), since(t));
    return;
  }
  const std::vector<IndexData> parts = split_index_data(data, shards);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string path = shard_path(output, i);
    Index::save(parts[i], path);
    note("shard %s: %zu documents, %zu of the %zu words, %zu nonzeros", path.c_str(),
         parts[i].ids.size(), parts[i].vocab.size(), data.vocab.size(), parts[i].indices.size());
  }
  note("%zu shards of %zu documents (%.2f s): search them with one --index each, in order",
       parts.size(), data.ids.size(), since(t));
}

// --shards, worded alike for build and synth.
void add_shards_flag(CLI::App* c, std::size_t& shards) {
  c->add_option("--shards", shards,
                "Write N index files, each a contiguous part of the documents with only the words "
                "it uses (OUTPUT.0.idx, OUTPUT.1.idx, ... for OUTPUT.idx), searched as one with "
                "--index given for each")
      ->check(at_least_one())
      ->capture_default_str();
}

// Where `build --train-vectors` writes its model by default: beside the index or collection
// (a collection keeps only its own files in its directory), train.idx -> train.vectors.bin.
std::string default_vectors_path(const std::string& output) {
  std::string stem = output;
  while (stem.size() > 1 && stem.back() == '/') stem.pop_back();
  if (stem.ends_with(".idx")) stem.resize(stem.size() - 4);
  return stem + ".vectors.bin";
}

struct BuildFlags {
  std::string embeddings, docs, stopwords, weighting = "tf", output, vectors_output, metric;
  bool no_text = false, collection = false, train = false;
  // Given, or (unset) on for vectors trained here: what the tuning task chose (docs/cli.md).
  std::optional<bool> unit_vectors;
  std::size_t shards = 1;
  FastTextOptions training;
};

void run_build(const BuildFlags& f) {
  if (f.collection && f.shards > 1)
    throw Error("--collection and --shards: a collection keeps its own segments; give one");
  if (f.train == !f.embeddings.empty())
    throw Error(f.train ? "--train-vectors and --embeddings: give one (the vectors are trained "
                          "on the documents, or read from the file)"
                        : "give --embeddings FILE, or --train-vectors to train them on the "
                          "documents");
  if (f.train && !f.metric.empty())
    throw Error(f.metric +
                ": a metric is learned on particular word vectors, and --train-vectors trains new "
                "ones: give --embeddings, the vectors of the index it was learned from");
  auto t = Clock::now();
  std::shared_ptr<const Metric> metric;
  if (!f.metric.empty()) {
    metric = std::make_shared<const Metric>(Metric::load(f.metric));
    if (f.unit_vectors && *f.unit_vectors != metric->unit_vectors())
      throw Error(f.metric + ": learned on vectors " +
                  (metric->unit_vectors() ? "scaled to length 1" : "as they are") + ", so --" +
                  (metric->unit_vectors() ? "" : "no-") +
                  "unit-vectors is implied; leave the flag out");
  }
  std::vector<RawDocument> documents = read_tsv(f.docs);
  StopWords stop;
  if (!f.stopwords.empty()) stop = StopWords::load(f.stopwords);
  const StopWords* stop_words = f.stopwords.empty() ? nullptr : &stop;
  std::string emb_path = f.embeddings;
  if (f.train) {
    emb_path = f.vectors_output.empty() ? default_vectors_path(f.output) : f.vectors_output;
    train_vectors(documents, stop_words, f.training, emb_path, f.docs);
  }
  // Only the vectors of the corpus's words are kept: memory follows the corpus, not the file.
  WordSet tokens = distinct_tokens(documents);
  const std::size_t corpus_words = tokens.size();
  if (metric)  // and the metric's words, whose vectors must be the ones it was learned on
    for (const std::string& w : metric->words()) tokens.insert(w);
  const Embeddings emb = Embeddings::load(emb_path, &tokens);
  if (metric) metric->check_vectors(emb, f.metric);
  if (emb.format() == "fasttext")
    note(
        "vectors %s: fastText model of %zu words, dim %zu: vectors for %zu of the corpus's %zu "
        "words, those it never saw from their character n-grams (%.2f s)",
        emb_path.c_str(), emb.file_words(), emb.dim(), emb.size(), corpus_words, since(t));
  else
    note("embeddings %s: %zu of its %zu words kept (the corpus's%s), dim %zu, %s%s (%.2f s)",
         emb_path.c_str(), emb.size(), emb.file_words(), metric ? " and the metric's" : "",
         emb.dim(), emb.format().c_str(),
         emb.duplicates()
             ? (", " + std::to_string(emb.duplicates()) + " duplicate words skipped").c_str()
             : "",
         since(t));
  BuildOptions bo;
  bo.stopwords = stop_words;
  bo.weighting = parse_weighting(f.weighting);
  bo.keep_text = !f.no_text;
  bo.unit_vectors = f.unit_vectors.value_or(unit_vectors_by_default(emb, metric.get()));
  bo.metric = metric;
  if (metric)
    note("metric %s: map %zu x %zu, %zu word weights", f.metric.c_str(), metric->out_dim(),
         metric->in_dim(), metric->words().size());
  TextReport report;
  const IndexData data = build_index_data(emb, documents, bo, &report);
  report_text(report, "documents");
  if (!f.collection) return save(data, f.output, f.shards, t);
  Collection::create(f.output, data, emb_path);
  note(
      "collection %s: %zu documents, %zu words (%.2f s): lcrwmd add / delete / compact change "
      "it, --index %s reads it",
      f.output.c_str(), data.ids.size(), data.vocab.size(), since(t), f.output.c_str());
}

}  // namespace

void add_build(CLI::App& app) {
  auto* c = app.add_subcommand("build", "Build an index from word vectors and documents");
  auto f = std::make_shared<BuildFlags>();
  c->add_option("--embeddings", f->embeddings,
                "word2vec binary, word2vec/GloVe/fastText text embeddings, or a fastText model "
                "(.bin: every word gets a vector, from its character n-grams if unseen)");
  c->add_flag("--train-vectors", f->train,
              "Train the word vectors on the documents (fastText; options below) instead of "
              "--embeddings, and build with them");
  c->add_option("--vectors-output", f->vectors_output,
                "Where --train-vectors writes its model (default: OUTPUT's stem + .vectors.bin); "
                "give it as --embeddings to search, serve, add...");
  c->add_flag_function(
      "--unit-vectors,!--no-unit-vectors", [f](std::int64_t n) { f->unit_vectors = n > 0; },
      "Scale every word vector to length 1 (recorded: queries' vectors are scaled too); on by "
      "default with --train-vectors");
  c->add_option("--docs", f->docs, "Documents: TSV id<TAB>label<TAB>text (.gz ok)")->required();
  c->add_option("--stopwords", f->stopwords,
                "Stop-word file, one word per line (recorded: queries are read with them too)");
  c->add_option("--weighting", f->weighting, "tf (L1-normalised counts) | tfidf")
      ->check(CLI::IsMember({"tf", "tfidf"}))
      ->capture_default_str();
  c->add_option("--output", f->output, "Index file to write")->required();
  c->add_flag("--no-text", f->no_text,
              "Leave the documents' texts out (kept compressed by default, for display)");
  c->add_option("--metric", f->metric,
                "A metric learned from labels (lcrwmd learn): the vectors mapped and the words "
                "weighted by it for every method; recorded, and applied to queries");
  add_shards_flag(c, f->shards);
  c->add_flag("--collection", f->collection,
              "Write OUTPUT as a collection directory that takes documents and deletions "
              "(lcrwmd add, delete, compact), recording --embeddings for their new words");
  add_training_flags(c, f->training);
  c->callback([f] { run_build(*f); });
}

// Top-k as TSV query_id, rank, doc_id, distance; to stdout, or atomically to `file` (made
// before the search, so that an unwritable path fails before any work).
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

void add_synth(CLI::App& app) {
  auto* c = app.add_subcommand("synth", "Synthetic index with the paper's shapes (Zipf words)");
  struct Flags {
    SynthOptions o;
    std::string preset, output, queries_output, embeddings_output, docs_output;
    std::size_t shards = 1;
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
  add_shards_flag(c, f->shards);
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
    save(s.index, f->output, f->shards, t);
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
