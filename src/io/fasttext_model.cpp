// FastTextModel (lcrwmd/fasttext.h): a fastText .bin read by libfasttext, after a walk over its
// layout (io/fasttext_layout.h).
#include <fasttext/fasttext.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "io/embeddings_scan.h"
#include "io/fasttext_layout.h"
#include "lcrwmd/error.h"
#include "lcrwmd/fasttext.h"

namespace lcrwmd {
namespace {

// fastText's file: its magic number and the newest version it writes (FASTTEXT_VERSION).
constexpr std::int32_t kMagic = 793712314;
constexpr std::int32_t kOldestVersion = 11, kNewestVersion = 12;
constexpr std::int32_t kSupervised = 3;  // Args::model: cbow 1, skipgram 2, supervised 3
constexpr std::int32_t kMaxDim = 1 << 16;
constexpr std::int32_t kMaxEntries = 30000000;      // Dictionary::MAX_VOCAB_SIZE
constexpr std::int64_t kNoNode = 1000000000000000;  // HierarchicalSoftmaxLoss::buildTree's 1e15

// Reads fields front to back; an Error naming the file and the byte where the file ends early.
class Walk {
 public:
  Walk(const MappedFile& f) : f_(f) {}
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, f_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  void skip(std::uint64_t bytes, const char* what) {
    need(bytes, what);
    at_ += bytes;
  }
  // A NUL-terminated string.
  void skip_string(const char* what) {
    const void* nul = std::memchr(f_.data() + at_, 0, f_.size() - at_);
    if (nul == nullptr) fail(std::string("ends inside ") + what);
    at_ = static_cast<std::size_t>(static_cast<const char*>(nul) - f_.data()) + 1;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(f_.path() + ": not a fastText model of word vectors: " + why + " (byte " +
                std::to_string(at_) + " of " + std::to_string(f_.size()) +
                "; truncated or another file?)");
  }
  std::size_t at() const { return at_; }
  std::size_t size() const { return f_.size(); }

 private:
  void need(std::uint64_t bytes, const char* what) const {
    if (bytes > f_.size() - at_) fail(std::string("ends inside ") + what);
  }
  const MappedFile& f_;
  std::size_t at_ = 0;
};

// A matrix: rows x cols floats, its shape as the dictionary and arguments say.
void walk_matrix(Walk& w, std::int64_t rows, std::int64_t cols, const char* what) {
  const auto m = w.read<std::int64_t>(what), n = w.read<std::int64_t>(what);
  if (m != rows || n != cols)
    w.fail(std::string(what) + " is " + std::to_string(m) + " x " + std::to_string(n) + ", not " +
           std::to_string(rows) + " x " + std::to_string(cols));
  w.skip(static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n) * sizeof(float), what);
}

}  // namespace

// The whole layout (FastText::saveModel): signature, arguments, dictionary, input matrix,
// output matrix, and nothing after.
void check_fasttext_layout(const MappedFile& f) {
  Walk w(f);
  if (w.read<std::int32_t>("the signature") != kMagic) w.fail("no fastText signature");
  const auto version = w.read<std::int32_t>("the signature");
  if (version < kOldestVersion || version > kNewestVersion)
    w.fail("format version " + std::to_string(version) + " (this build reads " +
           std::to_string(kOldestVersion) + " to " + std::to_string(kNewestVersion) + ")");
  // Args::save: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate, t.
  std::int32_t a[12];
  for (std::int32_t& x : a) x = w.read<std::int32_t>("the arguments");
  w.skip(sizeof(double), "the arguments");
  const std::int32_t dim = a[0], model = a[7], bucket = a[8], minn = a[9], maxn = a[10];
  if (model == kSupervised)
    throw Error(f.path() +
                ": a supervised fastText model (a classifier), not word vectors: train one "
                "with `lcrwmd vectors train` or fastText's skipgram or cbow");
  if (model != 1 && model != 2) w.fail("unknown model kind " + std::to_string(model));
  if (dim <= 0 || dim > kMaxDim) w.fail("dimension " + std::to_string(dim));
  // libfasttext hashes n-grams modulo the buckets: none with n-grams would divide by zero.
  if (bucket < 0 || minn < 0 || maxn < 0 || (maxn > 0 && (minn > maxn || bucket == 0)))
    w.fail("n-gram arguments bucket " + std::to_string(bucket) + ", minn " + std::to_string(minn) +
           ", maxn " + std::to_string(maxn));
  // Dictionary::save.
  const auto size = w.read<std::int32_t>("the dictionary");
  const auto nwords = w.read<std::int32_t>("the dictionary");
  const auto nlabels = w.read<std::int32_t>("the dictionary");
  w.skip(sizeof(std::int64_t), "the dictionary");
  const auto pruned = w.read<std::int64_t>("the dictionary");
  // At least one word (fastText's "</s>" is one): an empty dictionary's hash table is empty, and
  // libfasttext's lookups in it would divide by zero.
  if (nwords <= 0 || nlabels < 0 || size != std::int64_t{nwords} + nlabels)
    w.fail("a dictionary of " + std::to_string(size) + " entries, " + std::to_string(nwords) +
           " words and " + std::to_string(nlabels) + " labels");
  // libfasttext's hash table has kMaxEntries slots: a dictionary that fills it would make its
  // lookups loop forever.
  if (size >= kMaxEntries)
    w.fail("a dictionary of " + std::to_string(size) + " entries (fastText holds fewer than " +
           std::to_string(kMaxEntries) + ")");
  // Each entry: its word, a count, and its kind: the words first, then the labels. A model trained
  // with the hierarchical softmax (loss hs) has libfasttext build its tree from the counts, with
  // kNoNode as the count of nodes not yet made: a count at or above it makes a node its own parent
  // (its path to the root then grows until memory runs out), and the tree's sums must not overflow.
  std::int64_t total = 0;
  for (std::int32_t i = 0; i < size; ++i) {
    w.skip_string("the dictionary's words");
    const auto count = w.read<std::int64_t>("the dictionary's words");
    if (count < 0 || count >= kNoNode || (total += count) >= kNoNode)
      w.fail("entry " + std::to_string(i) + " of the dictionary has a count of " +
             std::to_string(count) + " (counts and their sum are below 10^15)");
    if (w.read<std::int8_t>("the dictionary's words") != (i < nwords ? 0 : 1))
      w.fail("entry " + std::to_string(i) + " of the dictionary is not a " +
             (i < nwords ? "word" : "label"));
  }
  if (pruned >= 0) throw Error(f.path() + ": a quantized fastText model: its vectors are not read");
  if (w.read<std::uint8_t>("the input matrix") != 0)
    throw Error(f.path() + ": a quantized fastText model: its vectors are not read");
  const std::size_t rows_at = w.at() + 2 * sizeof(std::int64_t);
  walk_matrix(w, std::int64_t{nwords} + bucket, dim, "the input matrix");
  // Its rows, whose means are the words' vectors: finite, and small enough to square and add.
  std::vector<float> row(static_cast<std::size_t>(dim));  // copied: the rows are unaligned
  for (std::int64_t r = 0; r < std::int64_t{nwords} + bucket; ++r) {
    std::memcpy(row.data(), f.data() + rows_at + static_cast<std::size_t>(r) * row.size() * 4,
                row.size() * sizeof(float));
    for (std::int32_t k = 0; k < dim; ++k)
      if (!std::isfinite(row[k]))
        throw Error(f.path() + ": row " + std::to_string(r) +
                    " of its input matrix has a NaN or infinite value");
    if (!magnitude_ok(row.data(), row.size()))
      throw Error(f.path() + ": row " + std::to_string(r) + " of its input matrix is too large");
  }
  if (w.read<std::uint8_t>("the output matrix") != 0)
    throw Error(f.path() + ": a quantized fastText model: its vectors are not read");
  // A row per word (or per label, or per tree node): any count, but as wide as the input's rows,
  // or libfasttext would allocate whatever its header says.
  const auto out_rows = w.read<std::int64_t>("the output matrix");
  const auto out_cols = w.read<std::int64_t>("the output matrix");
  if (out_rows < 0 || out_rows > std::numeric_limits<std::int32_t>::max() || out_cols != dim)
    w.fail("an output matrix of " + std::to_string(out_rows) + " x " + std::to_string(out_cols) +
           " (dimension " + std::to_string(dim) + ")");
  w.skip(static_cast<std::uint64_t>(out_rows) * static_cast<std::uint64_t>(dim) * sizeof(float),
         "the output matrix");
  if (w.at() != w.size()) w.fail(std::to_string(w.size() - w.at()) + " bytes after the model");
}

// libfasttext's model, with the access a reader needs to what it keeps protected.
struct FastTextModel::Model : fasttext::FastText {
  void read(std::istream& in) {
    if (!checkModel(in)) throw Error("not a fastText model");
    loadModel(in);
  }
  // Training's output rows (a row per word) are not needed for the words' vectors.
  void drop_training_state() {
    model_.reset();
    output_ = std::make_shared<fasttext::DenseMatrix>();
  }
  const fasttext::Args& args() const { return *args_; }
  const fasttext::Dictionary& dictionary() const { return *dict_; }
  // Dense: the layout's walk refused quantized models.
  const fasttext::DenseMatrix& input() const {
    return static_cast<const fasttext::DenseMatrix&>(*input_);
  }
};

bool FastTextModel::is_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::int32_t magic = 0;
  return in.read(reinterpret_cast<char*>(&magic), sizeof magic) && magic == kMagic;
}

std::unique_ptr<FastTextModel> FastTextModel::load(const std::string& path) {
  {
    const MappedFile f(path);
    check_fasttext_layout(f);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  auto m = std::make_unique<Model>();
  try {
    m->read(in);
  } catch (const std::exception& e) {
    throw Error(path + ": fastText could not read it: " + e.what());
  }
  if (!in) throw Error(path + ": fastText read past its end (changed while read?)");
  m->drop_training_state();
  return std::unique_ptr<FastTextModel>(new FastTextModel(path, std::move(m)));
}

FastTextModel::FastTextModel(std::string path, std::unique_ptr<Model> model)
    : path_(std::move(path)), model_(std::move(model)) {}
FastTextModel::~FastTextModel() = default;

std::size_t FastTextModel::dim() const { return static_cast<std::size_t>(model_->getDimension()); }

const std::string& FastTextModel::format() const {
  static const std::string kFormat = "fasttext";
  return kFormat;
}

bool FastTextModel::lookup(std::string_view word, float* out) const {
  // The rows whose mean is the word's vector: a known word's own row and its n-grams', an unseen
  // word's n-grams'. A label (a "__label__" word in a model trained by fastText's CLI) has no row
  // of its own in the input matrix, so it counts as unseen here (libfasttext would read a bucket
  // row, or past the matrix in a model without n-grams).
  const fasttext::Dictionary& dict = model_->dictionary();
  const std::string w(word);
  const std::int32_t id = dict.getId(w);
  const bool known = id >= 0 && id < dict.nwords();
  std::vector<std::int32_t> unseen;
  if (!known)
    dict.computeSubwords(fasttext::Dictionary::BOW + w + fasttext::Dictionary::EOW, unseen);
  const std::vector<std::int32_t>& rows = known ? dict.getSubwords(id) : unseen;
  if (rows.empty()) return false;
  const fasttext::DenseMatrix& input = model_->input();
  const std::size_t d = dim();
  std::fill(out, out + d, 0.0f);
  for (const std::int32_t r : rows) {
    const float* row = input.data() + static_cast<std::size_t>(r) * d;
    for (std::size_t k = 0; k < d; ++k) out[k] += row[k];
  }
  const float scale = 1.0f / static_cast<float>(rows.size());
  for (std::size_t k = 0; k < d; ++k) out[k] *= scale;
  return true;
}

bool FastTextModel::covers_every_word() const { return model_->args().maxn > 0; }
std::size_t FastTextModel::words() const {
  return static_cast<std::size_t>(model_->dictionary().nwords());
}
std::string FastTextModel::word(std::size_t i) const {
  return model_->dictionary().getWord(static_cast<std::int32_t>(i));
}
std::size_t FastTextModel::buckets() const {
  return static_cast<std::size_t>(model_->args().bucket);
}
std::size_t FastTextModel::resident_bytes() const {
  return (words() + buckets()) * dim() * sizeof(float);
}

}  // namespace lcrwmd
