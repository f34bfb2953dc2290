#pragma once
// A word metric learned from labels (Supervised WMD: `lcrwmd learn`), as builds and queries
// apply it: every word vector mapped by A (out_dim x in_dim), and each word's weight multiplied
// into its weight in a document or query before they are renormalised (a word the metric does
// not hold weighs 1). Every method then runs unchanged in the learned space. An index built
// with a metric stores it whole and applies it to its queries' words (lcrwmd/query.h).
//
// A metric is learned on particular word vectors (scaled to length 1 or not); it records a
// fingerprint of its words' vectors so that a build with other vectors is refused, since the
// map would then be applied to a space it was not learned in.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lcrwmd/string_map.h"

namespace lcrwmd {

class WordVectors;

class Metric {
 public:
  // words: distinct (any order; kept sorted bytewise), one positive finite weight each; map:
  // out_dim x in_dim finite values, row-major, out_dim <= in_dim. An Error otherwise.
  Metric(std::size_t in_dim, std::size_t out_dim, std::vector<float> map,
         std::vector<std::string> words, std::vector<float> weights, bool unit_vectors,
         std::uint64_t vectors_fingerprint);

  // A metric file (.lcm), checked; errors name the file.
  static Metric load(const std::string& path);
  // Written whole or not at all (temporary, then rename).
  void save(const std::string& path) const;
  // Its file's bytes (what an index stores), and a metric read from such bytes (name: where
  // they came from, for errors).
  std::string to_bytes() const;
  static Metric from_bytes(std::string_view bytes, const std::string& name);

  std::size_t in_dim() const { return in_dim_; }
  std::size_t out_dim() const { return out_dim_; }
  const std::vector<float>& map() const { return map_; }
  const std::vector<std::string>& words() const { return words_; }
  const std::vector<float>& weights() const { return weights_; }
  // Whether it was learned on vectors scaled to length 1 (a build with it scales them too).
  bool unit_vectors() const { return unit_vectors_; }
  std::uint64_t vectors_fingerprint() const { return vectors_fingerprint_; }
  // XXH3-64 of its bytes: which metric an index was built with.
  std::uint64_t fingerprint() const { return fingerprint_; }

  // The weight of `word`: its learned one, or 1 where the metric does not hold it.
  float weight(std::string_view word) const;
  // out (out_dim floats) = A in (in_dim floats), accumulated in double.
  void apply(const float* in, float* out) const;

  // The fingerprint of `words`' vectors (sorted bytewise, each present), vector(i) giving
  // words[i]'s (dim floats, as learned: scaled to length 1 where that was done).
  template <typename VectorOf>
  static std::uint64_t fingerprint_vectors(const std::vector<std::string>& words, std::size_t dim,
                                           VectorOf&& vector);
  // An Error (naming `source` and the metric's `name`) unless `source` gives every word of the
  // metric the vector it was learned with.
  void check_vectors(const WordVectors& source, const std::string& name) const;

 private:
  static std::uint64_t fingerprint_of(const std::vector<std::string>& words,
                                      const std::vector<const float*>& vectors, std::size_t dim);
  std::size_t in_dim_, out_dim_;
  std::vector<float> map_;
  std::vector<std::string> words_;
  std::vector<float> weights_;
  bool unit_vectors_;
  std::uint64_t vectors_fingerprint_;
  std::uint64_t fingerprint_ = 0;
  StringMap<std::uint32_t> word_ids_;
};

template <typename VectorOf>
std::uint64_t Metric::fingerprint_vectors(const std::vector<std::string>& words, std::size_t dim,
                                          VectorOf&& vector) {
  std::vector<const float*> rows(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) rows[i] = vector(i);
  return fingerprint_of(words, rows, dim);
}

}  // namespace lcrwmd
