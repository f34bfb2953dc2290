// A learned word metric (lcrwmd/metric.h): checked on the way in, applied to word vectors and
// weights, and its file (.lcm, little-endian):
//   magic "LCRWMDMT", u32 version, u32 flags (1: learned on unit-length vectors),
//   u64 in_dim, out_dim, words, vectors_fingerprint,
//   f32 map (out_dim x in_dim), f32 weights (per word), u64 word offsets (words + 1), the words'
//   bytes (sorted bytewise), and last an XXH3-64 of everything before it.
#include "lcrwmd/metric.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "io/mapped_file.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd {
namespace {

constexpr char kMagic[8] = {'L', 'C', 'R', 'W', 'M', 'D', 'M', 'T'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kUnitVectors = 1;

template <typename T>
void put(std::string& out, const T& x) {
  out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

// Reads fields front to back; every count is checked against the bytes left first.
class Fields {
 public:
  Fields(std::string_view bytes, const std::string& name) : b_(bytes), name_(name) {}
  template <typename T>
  T pod() {
    T x;
    std::memcpy(&x, take(sizeof x), sizeof x);
    return x;
  }
  template <typename T>
  std::vector<T> array(std::uint64_t n) {
    if (n > left() / sizeof(T)) bad("truncated");
    std::vector<T> v(static_cast<std::size_t>(n));
    if (n) std::memcpy(v.data(), take(v.size() * sizeof(T)), v.size() * sizeof(T));
    return v;
  }
  std::size_t left() const { return b_.size() - at_; }
  [[noreturn]] void bad(const std::string& why) const {
    throw Error(name_ + ": not a valid lcrwmd metric: " + why);
  }

 private:
  const char* take(std::size_t n) {
    if (n > left()) bad("truncated");
    const char* p = b_.data() + at_;
    at_ += n;
    return p;
  }
  std::string_view b_;
  const std::string& name_;
  std::size_t at_ = 0;
};

}  // namespace

Metric::Metric(std::size_t in_dim, std::size_t out_dim, std::vector<float> map,
               std::vector<std::string> words, std::vector<float> weights, bool unit_vectors,
               std::uint64_t vectors_fingerprint)
    : in_dim_(in_dim),
      out_dim_(out_dim),
      map_(std::move(map)),
      unit_vectors_(unit_vectors),
      vectors_fingerprint_(vectors_fingerprint) {
  if (in_dim == 0 || out_dim == 0 || out_dim > in_dim)
    throw Error("metric: a map of " + std::to_string(out_dim) + " x " + std::to_string(in_dim) +
                " (it must have at least one row, and no more rows than columns)");
  if (map_.size() != out_dim * in_dim || weights.size() != words.size())
    throw Error("metric: inconsistent sizes");
  if (!std::all_of(map_.begin(), map_.end(), [](float x) { return std::isfinite(x); }))
    throw Error("metric: its map has a value that is not finite");
  std::vector<std::size_t> order(words.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return words[a] < words[b]; });
  for (std::size_t r = 0; r < order.size(); ++r) {
    const std::size_t i = order[r];
    if (!(std::isfinite(weights[i]) && weights[i] > 0))
      throw Error("metric: the weight of '" + words[i] + "' is not a positive number");
    if (r > 0 && words[i] == words_.back())
      throw Error("metric: the word '" + words[i] + "' appears twice");
    words_.push_back(std::move(words[i]));
    weights_.push_back(weights[i]);
  }
  word_ids_.reserve(words_.size());
  for (std::size_t i = 0; i < words_.size(); ++i)
    word_ids_.emplace(words_[i], static_cast<std::uint32_t>(i));
  const std::string bytes = to_bytes();
  fingerprint_ = XXH3_64bits(bytes.data(), bytes.size());
}

std::string Metric::to_bytes() const {
  std::string out(kMagic, sizeof kMagic);
  put(out, kVersion);
  put(out, unit_vectors_ ? kUnitVectors : std::uint32_t{0});
  put(out, std::uint64_t{in_dim_});
  put(out, std::uint64_t{out_dim_});
  put(out, std::uint64_t{words_.size()});
  put(out, vectors_fingerprint_);
  out.append(reinterpret_cast<const char*>(map_.data()), map_.size() * sizeof(float));
  out.append(reinterpret_cast<const char*>(weights_.data()), weights_.size() * sizeof(float));
  std::uint64_t offset = 0;
  put(out, offset);
  for (const std::string& w : words_) put(out, offset += w.size());
  for (const std::string& w : words_) out += w;
  put(out, static_cast<std::uint64_t>(XXH3_64bits(out.data(), out.size())));
  return out;
}

Metric Metric::from_bytes(std::string_view bytes, const std::string& name) {
  Fields f(bytes, name);
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    f.bad("wrong magic bytes");
  if (bytes.size() < sizeof kMagic + sizeof(std::uint64_t)) f.bad("truncated");
  std::uint64_t hash;
  std::memcpy(&hash, bytes.data() + bytes.size() - sizeof hash, sizeof hash);
  if (hash != XXH3_64bits(bytes.data(), bytes.size() - sizeof hash))
    f.bad("checksum mismatch (corrupted or truncated)");
  f.array<char>(sizeof kMagic);
  const auto version = f.pod<std::uint32_t>();
  if (version != kVersion)
    f.bad("format version " + std::to_string(version) + "; this build reads " +
          std::to_string(kVersion));
  const auto flags = f.pod<std::uint32_t>();
  if ((flags & ~kUnitVectors) != 0) f.bad("unsupported flags");
  const auto in = f.pod<std::uint64_t>(), out = f.pod<std::uint64_t>(), n = f.pod<std::uint64_t>(),
             vectors_fingerprint = f.pod<std::uint64_t>();
  if (in == 0 || out == 0 || out > in || in > (1u << 16)) f.bad("a map of unsupported shape");
  std::vector<float> map = f.array<float>(out * in);
  std::vector<float> weights = f.array<float>(n);
  if (n >= f.left() / sizeof(std::uint64_t)) f.bad("truncated");  // n + 1 offsets, the hash
  const std::vector<std::uint64_t> offsets = f.array<std::uint64_t>(n + 1);
  if (offsets[0] != 0 || offsets[n] != f.left() - sizeof hash) f.bad("its words are damaged");
  std::vector<std::string> words(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i]) f.bad("its words are damaged");
    const std::vector<char> w = f.array<char>(offsets[i + 1] - offsets[i]);
    words[i].assign(w.begin(), w.end());
    if (i > 0 && !(words[i - 1] < words[i])) f.bad("its words are unsorted or repeated");
  }
  try {
    return Metric(in, out, std::move(map), std::move(words), std::move(weights),
                  (flags & kUnitVectors) != 0, vectors_fingerprint);
  } catch (const Error& e) {
    f.bad(e.what());
  }
}

Metric Metric::load(const std::string& path) {
  const MappedFile file(path);
  return from_bytes(file.view(), path);
}

void Metric::save(const std::string& path) const {
  AtomicFile file(path);
  file.write(to_bytes());
  file.commit();
}

float Metric::weight(std::string_view word) const {
  const auto it = word_ids_.find(word);
  return it == word_ids_.end() ? 1.0f : weights_[it->second];
}

void Metric::apply(const float* in, float* out) const {
  for (std::size_t r = 0; r < out_dim_; ++r) {
    const float* row = map_.data() + r * in_dim_;
    double s = 0;
    for (std::size_t e = 0; e < in_dim_; ++e) s += static_cast<double>(row[e]) * in[e];
    out[r] = static_cast<float>(s);
  }
}

std::uint64_t Metric::fingerprint_of(const std::vector<std::string>& words,
                                     const std::vector<const float*>& vectors, std::size_t dim) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (std::size_t i = 0; i < words.size(); ++i) {
    XXH3_64bits_update(st, words[i].data(), words[i].size() + 1);  // + NUL
    XXH3_64bits_update(st, vectors[i], dim * sizeof(float));
  }
  const std::uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

void Metric::check_vectors(const WordVectors& source, const std::string& name) const {
  const std::string both = name + " with the word vectors " + source.source();
  if (source.dim() != in_dim_)
    throw Error(both + ": the metric maps vectors of dimension " + std::to_string(in_dim_) +
                ", these have " + std::to_string(source.dim()));
  std::vector<float> rows(words_.size() * in_dim_);
  for (std::size_t i = 0; i < words_.size(); ++i) {
    float* v = rows.data() + i * in_dim_;
    if (!source.lookup(words_[i], v))
      throw Error(both + ": the metric's word '" + words_[i] +
                  "' has no vector there: it was learned on other vectors");
    if (unit_vectors_) to_unit_length(v, in_dim_);
  }
  const std::uint64_t fp = fingerprint_vectors(
      words_, in_dim_, [&](std::size_t i) { return rows.data() + i * in_dim_; });
  if (fp != vectors_fingerprint_)
    throw Error(both + ": the metric was learned on other vectors (its words' vectors differ" +
                (unit_vectors_ ? ", each scaled to length 1" : "") +
                "): build with the vectors of the index it was learned from");
}

}  // namespace lcrwmd
