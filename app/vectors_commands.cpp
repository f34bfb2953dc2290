// lcrwmd vectors train: word vectors (fastText) trained on the user's own documents.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "app/query_input.h"
#include "app/stop_on_signal.h"
#include "app/vectors.h"
#include "lcrwmd/error.h"

namespace lcrwmd::app {
void add_training_flags(CLI::App* c, FastTextOptions& o) {
  const char* group = "Training word vectors (fastText)";
  c->add_option("--model", o.model, "skipgram | cbow")
      ->check(CLI::IsMember({"skipgram", "cbow"}))
      ->capture_default_str()
      ->group(group);
  c->add_option("--dim", o.dim, "Vector dimension")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str()
      ->group(group);
  c->add_option("--epochs", o.epochs, "Passes over the text")
      ->check(at_least_one())
      ->capture_default_str()
      ->group(group);
  c->add_option("--min-count", o.min_count,
                "Occurrences a word needs for a row of its own (rarer words: their n-grams)")
      ->capture_default_str()
      ->group(group);
  c->add_option("--minn", o.min_n, "Shortest character n-gram")
      ->capture_default_str()
      ->group(group);
  c->add_option("--maxn", o.max_n,
                "Longest character n-gram (0: none; then a word never seen has no vector)")
      ->capture_default_str()
      ->group(group);
  c->add_option("--buckets", o.buckets,
                "Rows of the n-gram table (its memory: buckets x dim x 4 bytes)")
      ->capture_default_str()
      ->group(group);
  c->add_option("--window", o.window, "Context window, in words")
      ->check(at_least_one())
      ->capture_default_str()
      ->group(group);
  c->add_option("--negatives", o.negatives, "Negative samples per word")
      ->check(at_least_one())
      ->capture_default_str()
      ->group(group);
  c->add_option("--lr", o.learning_rate, "Learning rate")->capture_default_str()->group(group);
  c->add_option("--threads", o.threads, "Training threads (0: every core)")
      ->capture_default_str()
      ->group(group);
  c->add_option("--seed", o.seed,
                "Random seed (with --threads 1, the same model byte for byte each time)")
      ->capture_default_str()
      ->group(group);
}

TrainingReport train_vectors(const std::vector<RawDocument>& docs, const StopWords* stopwords,
                             const FastTextOptions& o, const std::string& output,
                             const std::string& corpus) {
  check_options(o);
  const bool tty = isatty(STDERR_FILENO) != 0;
  // The last tenth (a log) or thousandth (a terminal) shown; none at 0, before fastText has
  // measured a speed (0 words/s, days left).
  std::atomic<int> shown{0};
  const StopOnSignal stop;
  const TrainingCallback progress = [&](const TrainingProgress& p) {
    if (stop.requested()) return false;
    const int step = static_cast<int>(p.fraction * (tty ? 1000 : 10));
    if (step > shown.exchange(step))
      std::fprintf(stderr,
                   tty ? "\rtraining vectors: %5.1f%%  %9.0f words/s  %5.0f s left "
                       : "training vectors: %5.1f%%  %9.0f words/s  %5.0f s left\n",
                   100 * p.fraction, p.words_per_second, p.eta_seconds);
    return true;
  };
  note("training %s vectors of dimension %zu on %s (%zu documents, %zu epochs)", o.model.c_str(),
       o.dim, corpus.c_str(), docs.size(), o.epochs);
  TrainingReport r;
  try {
    r = train_fasttext(docs, stopwords, o, output, corpus, progress);
  } catch (const Error&) {
    if (tty) std::fputc('\n', stderr);
    if (stop.requested()) throw Error(output + ": training interrupted; no model written");
    throw;
  }
  if (tty) std::fputc('\n', stderr);
  note(
      "vectors %s: %zu words (%zu or more occurrences) from %zu tokens of %zu documents, "
      "%.0f words/s (%.2f s)",
      output.c_str(), r.words, o.min_count, r.tokens, r.documents, r.words_per_second, r.seconds);
  return r;
}

void add_vectors(CLI::App& app) {
  auto* vectors = app.add_subcommand("vectors", "Word vectors of your own documents (fastText)");
  vectors->require_subcommand(1);
  auto* c = vectors->add_subcommand(
      "train",
      "Train word vectors on documents, read as an index reads them (its tokenizer, stop "
      "words); the model (.bin) is taken by --embeddings everywhere, and gives a vector to "
      "words it never saw, from their character n-grams");
  struct Flags {
    std::vector<std::string> docs;
    std::string stopwords, output;
    FastTextOptions o;
  };
  auto f = std::make_shared<Flags>();
  c->add_option("--docs", f->docs, "Documents: TSV id<TAB>label<TAB>text (.gz ok); repeatable")
      ->required();
  c->add_option("--stopwords", f->stopwords,
                "Stop-word file: left out of training (give the one the index is built with)");
  c->add_option("--output", f->output, "Model file to write (fastText .bin), whole or not at all")
      ->required();
  add_training_flags(c, f->o);
  c->callback([f] {
    std::vector<RawDocument> docs;
    std::string corpus;
    for (const std::string& path : f->docs) {
      for (RawDocument& d : read_tsv(path)) docs.push_back(std::move(d));
      corpus += (corpus.empty() ? "" : ", ") + path;
    }
    StopWords stop;
    if (!f->stopwords.empty()) stop = StopWords::load(f->stopwords);
    train_vectors(docs, f->stopwords.empty() ? nullptr : &stop, f->o, f->output, corpus);
  });
}

}  // namespace lcrwmd::app
