// train_fasttext (lcrwmd/fasttext.h): the documents' tokens to a scratch file, libfasttext's
// training over it, the model written whole or not at all.
#include <fasttext/fasttext.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/bag_of_words.h"
#include "io/fasttext_layout.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "lcrwmd/fasttext.h"

namespace lcrwmd {
namespace {

// The documents' tokens as fastText reads text: a document a line, tokens between spaces.
// Returns the documents and tokens written.
std::pair<std::size_t, std::size_t> write_tokens(const std::vector<RawDocument>& docs,
                                                 const StopWords* stopwords, std::uint32_t version,
                                                 AtomicFile& out) {
  std::size_t documents = 0, tokens = 0;
  std::string line;
  for (const RawDocument& doc : docs) {
    line.clear();
    for_each_document_token(doc, version, [&](std::string_view token) {
      if (stopwords != nullptr && stopwords->contains(token)) return;
      if (!line.empty()) line += ' ';
      line += token;
      ++tokens;
    });
    if (line.empty()) continue;
    ++documents;
    line += '\n';
    out.write(line);
  }
  return {documents, tokens};
}

}  // namespace

void check_options(const FastTextOptions& o) {
  auto bad = [](const std::string& what) { throw Error("vectors: " + what); };
  if (o.model != "skipgram" && o.model != "cbow")
    bad("unknown model '" + o.model + "' (expected skipgram or cbow)");
  if (o.dim == 0 || o.dim > (1u << 16)) bad("dimension must be 1 to 65536");
  if (o.epochs == 0) bad("epochs must be at least 1");
  if (o.window == 0 || o.negatives == 0) bad("window and negatives must be at least 1");
  if (!(o.learning_rate > 0 && o.learning_rate < 10)) bad("learning rate must be in (0, 10)");
  if (o.max_n > 0 && o.min_n > o.max_n) bad("min_n must not exceed max_n");
  if (o.max_n > 0 && o.buckets == 0) bad("n-grams need buckets (or max_n 0 for none)");
  constexpr std::size_t kInt = 1u << 30;  // fastText's arguments are ints
  if (o.min_count > kInt || o.min_n > kInt || o.max_n > kInt || o.buckets > kInt ||
      o.window > kInt || o.negatives > kInt || o.epochs > kInt || o.threads > 4096)
    bad("an option is out of range");
}

TrainingReport train_fasttext(const std::vector<RawDocument>& docs, const StopWords* stopwords,
                              const FastTextOptions& o, const std::string& output,
                              const std::string& corpus, const TrainingCallback& progress,
                              std::uint32_t tokenizer_version) {
  check_options(o);
  TrainingReport report;
  // fastText reads its text by name: a scratch file beside the model, never committed.
  AtomicFile text(output + ".tokens");
  std::tie(report.documents, report.tokens) =
      write_tokens(docs, stopwords, tokenizer_version, text);
  if (report.tokens == 0)
    throw Error(corpus + ": no words to train vectors on (" + std::to_string(docs.size()) +
                " documents" + (stopwords != nullptr ? ", stop words dropped" : "") + ")");
  text.flush();

  fasttext::Args a;
  a.input = text.temporary_path();
  a.model = o.model == "cbow" ? fasttext::model_name::cbow : fasttext::model_name::sg;
  a.loss = fasttext::loss_name::ns;
  a.dim = static_cast<int>(o.dim);
  a.epoch = static_cast<int>(o.epochs);
  a.minCount = static_cast<int>(o.min_count);
  a.minn = o.max_n == 0 ? 0 : static_cast<int>(o.min_n);
  a.maxn = static_cast<int>(o.max_n);
  a.bucket = o.max_n == 0 ? 0 : static_cast<int>(o.buckets);
  a.ws = static_cast<int>(o.window);
  a.neg = static_cast<int>(o.negatives);
  a.lr = o.learning_rate;
  a.thread = static_cast<int>(o.threads != 0 ? o.threads
                                             : std::max(1u, std::thread::hardware_concurrency()));
  a.seed = static_cast<int>(o.seed);
  a.verbose = 0;

  fasttext::FastText ft;
  std::atomic<bool> stopped{false};
  fasttext::FastText::TrainCallback on_progress;
  if (progress)
    on_progress = [&](float fraction, float, double per_thread, double, std::int64_t eta) {
      if (stopped) return;
      const TrainingProgress p{static_cast<double>(fraction), per_thread * a.thread,
                               static_cast<double>(eta)};
      if (!progress(p) && !stopped.exchange(true)) ft.abort();
    };
  const auto start = std::chrono::steady_clock::now();
  try {
    ft.train(a, on_progress);
  } catch (const fasttext::FastText::AbortError&) {
    throw Error(output + ": training stopped; no model written");
  } catch (const std::exception& e) {
    throw Error(corpus + ": fastText could not train on it: " + e.what());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.words = static_cast<std::size_t>(ft.getDictionary()->nwords());
  report.words_per_second = report.seconds > 0 ? static_cast<double>(report.tokens) *
                                                     static_cast<double>(o.epochs) / report.seconds
                                               : 0;

  AtomicFile model(output);
  try {
    ft.saveModel(model.temporary_path());
  } catch (const std::exception& e) {
    throw Error(output + ": cannot write the model: " + e.what());
  }
  check_fasttext_layout(MappedFile(model.temporary_path()));  // fastText checks no write
  model.commit();
  return report;
}

}  // namespace lcrwmd
