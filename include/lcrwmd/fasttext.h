#pragma once
// fastText (Bojanowski et al. 2017, through Debian's libfasttext): word vectors trained on a
// user's own documents, read with the index's tokenizer and stop words, and a model file (.bin)
// as a source of word vectors that gives every word one, a word it never saw from its character
// n-grams.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/text.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {

class FastTextModel final : public WordVectors {
 public:
  // Whether the file starts as a fastText model does (its magic number).
  static bool is_model(const std::string& path);
  // Reads a model whole, its layout checked first: an Error naming the file (and the byte where
  // it went wrong) for a truncated or foreign file, and for a supervised (classifier) or
  // quantized model, which hold no word vectors to read. What training alone needs (the output
  // matrix) is let go of once read.
  static std::unique_ptr<FastTextModel> load(const std::string& path);
  ~FastTextModel() override;
  FastTextModel(const FastTextModel&) = delete;
  FastTextModel& operator=(const FastTextModel&) = delete;

  std::size_t dim() const override;
  const std::string& format() const override;
  const std::string& source() const override { return path_; }
  // fastText's own vector of a word (`fasttext print-word-vectors`): the mean of its row and
  // its n-grams' rows, or of its n-grams' alone for a word the model never saw. False only for
  // a word with neither (a model trained without n-grams).
  bool lookup(std::string_view word, float* out) const override;
  bool covers_every_word() const override;

  std::size_t words() const;  // in its dictionary
  std::string word(std::size_t i) const;
  std::size_t buckets() const;  // rows of its n-gram table
  // The bytes it holds in memory: its word and n-gram rows, (words + buckets) x dim floats.
  std::size_t resident_bytes() const;

 private:
  struct Model;
  FastTextModel(std::string path, std::unique_ptr<Model> model);
  std::string path_;
  std::unique_ptr<Model> model_;
};

// How word vectors are trained. The defaults are fastText's skipgram's, but for the epochs and
// the n-gram table: 20 passes (collections are small beside the corpora fastText was made for)
// and 200,000 buckets, not 2,000,000 (the table is buckets x dim x 4 bytes, which a service
// holds: 80 MB at dimension 100, not 800).
struct FastTextOptions {
  std::string model = "skipgram";  // skipgram | cbow
  std::size_t dim = 100;
  std::size_t epochs = 20;
  std::size_t min_count = 5;  // rarer words get vectors from their n-grams alone
  std::size_t min_n = 3;      // character n-gram lengths; max_n 0: none (then an unseen word
  std::size_t max_n = 6;      // has no vector)
  std::size_t buckets = 200000;
  std::size_t window = 5;
  std::size_t negatives = 5;
  double learning_rate = 0.05;
  std::size_t threads = 0;  // 0: every core
  std::uint32_t seed = 0;   // one thread and one seed give the same model, byte for byte
};

// An Error naming the option where options cannot train (a model other than skipgram or cbow,
// a zero dimension, epochs or learning rate, min_n > max_n).
void check_options(const FastTextOptions& options);

struct TrainingProgress {
  double fraction = 0;          // of the training done
  double words_per_second = 0;  // over all threads
  double eta_seconds = 0;
};
// Called now and then during training, from a training thread; false stops the training (an
// Error, and no model written).
using TrainingCallback = std::function<bool(const TrainingProgress&)>;

struct TrainingReport {
  std::size_t documents = 0;  // with at least one token past the stop words
  std::size_t tokens = 0;
  std::size_t words = 0;  // in the model's dictionary (min_count or more occurrences)
  double seconds = 0;
  double words_per_second = 0;  // tokens x epochs / seconds of training
};

// Trains word vectors on the documents' tokens, read as an index reads them (tokenizer
// `tokenizer_version`, stop words dropped), one line per document, and writes the model to
// `output` whole or not at all (temporary, then rename). `corpus` names the documents in
// errors: documents with no token to train on are an Error naming it.
TrainingReport train_fasttext(const std::vector<RawDocument>& docs, const StopWords* stopwords,
                              const FastTextOptions& options, const std::string& output,
                              const std::string& corpus, const TrainingCallback& progress = {},
                              std::uint32_t tokenizer_version = kTokenizerVersion);

}  // namespace lcrwmd
