#pragma once
// Training word vectors from the command line (lcrwmd vectors train, lcrwmd build
// --train-vectors): the training flags, worded alike for both, and a training run with a
// progress line that Ctrl-C stops cleanly (no model file left).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/fasttext.h"
#include "lcrwmd/text.h"

namespace lcrwmd::app {

void add_training_flags(CLI::App* c, FastTextOptions& o);

// Trains on `docs` (named `corpus` in errors) into `output`, reporting progress on stderr.
TrainingReport train_vectors(const std::vector<RawDocument>& docs, const StopWords* stopwords,
                             const FastTextOptions& o, const std::string& output,
                             const std::string& corpus);

}  // namespace lcrwmd::app
