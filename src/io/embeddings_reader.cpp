// Readers for word2vec binary and word2vec / GloVe / fastText text embeddings (and, by
// io/embeddings_indexed.cpp, for indexed embeddings files).
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "io/embeddings_scan.h"
#include "io/mapped_file.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/fasttext.h"

namespace lcrwmd {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits on spaces and TABs, dropping empty fields (word2vec text has a trailing space).
void split_fields(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    std::size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
}

bool parse_size(std::string_view s, std::size_t& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string quoted(std::string_view word) {
  constexpr std::size_t kMax = 40;
  std::string w(word.substr(0, kMax));
  if (word.size() > kMax) w += "...";
  return "'" + w + "'";
}

// "count dim" on the first line?
bool parse_header(std::string_view line, std::size_t& count, std::size_t& dim) {
  std::vector<std::string_view> f;
  split_fields(line, f);
  return f.size() == 2 && parse_size(f[0], count) && parse_size(f[1], dim) && dim > 0;
}

// Raw float bytes almost surely contain control bytes; text embeddings never do.
bool looks_binary(std::string_view body) {
  body = body.substr(0, 4096);
  for (unsigned char c : body) {
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return true;
  }
  return false;
}

std::string_view next_line(std::string_view text, std::size_t& pos) {
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

// Squared norms must stay finite: the distance kernels square and add the components.
bool magnitude_ok(const float* v, std::size_t dim) {
  double s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += double{v[d]} * v[d];
  return s < 1e30;
}

Embeddings::Embeddings(std::vector<std::string> words, std::vector<float> vectors, std::size_t dim)
    : dim_(dim), file_words_(words.size()), format_("memory"), source_("memory") {
  if (dim == 0) throw Error("embeddings: dimension must be positive");
  if (vectors.size() != words.size() * dim)
    throw Error("embeddings: " + std::to_string(vectors.size()) + " values for " +
                std::to_string(words.size()) + " words of dimension " + std::to_string(dim));
  for (std::size_t i = 0; i < words.size(); ++i) {
    const float* v = vectors.data() + i * dim;
    for (std::size_t d = 0; d < dim; ++d)
      if (!std::isfinite(v[d]))
        throw Error("embeddings: word " + quoted(words[i]) + " has a NaN or infinite value");
    if (!magnitude_ok(v, dim))
      throw Error("embeddings: vector of word " + quoted(words[i]) + " too large");
    add(words[i], v);
  }
}

void Embeddings::add(std::string_view word, const float* values) {
  if (lookup_.find(word) != lookup_.end()) {
    ++duplicates_;
    return;
  }
  lookup_.emplace(std::string(word), static_cast<std::uint32_t>(words_.size()));
  words_.emplace_back(word);
  vectors_.insert(vectors_.end(), values, values + dim_);
}

std::optional<std::uint32_t> Embeddings::find(std::string_view word) const {
  auto it = lookup_.find(word);
  if (it == lookup_.end()) return std::nullopt;
  return it->second;
}

std::size_t scan_embeddings(const MappedFile& file, EmbeddingsSink& sink) {
  const std::string& path = file.path();
  std::string_view text = file.view();
  if (text.empty()) throw Error(path + ": empty embeddings file");
  file.read_sequentially();
  // Pages already read leave resident memory every so often (a file may outgrow memory).
  constexpr std::size_t kReleaseEvery = std::size_t{64} << 20;
  std::size_t released = 0;
  const auto progress = [&](std::size_t at) {
    if (at - released < kReleaseEvery) return;
    file.release(released, at);
    released = at;
  };

  std::size_t pos = 0;
  std::size_t count = 0;
  std::size_t dim = 0;
  std::string_view first = next_line(text, pos);
  const bool has_header = parse_header(first, count, dim);
  std::vector<float> values;

  if (has_header && looks_binary(text.substr(std::min(pos, text.size())))) {
    // Each entry takes a word, a space and dim floats: nothing is allocated for more entries
    // than the file can hold (a damaged header is reported where the entries run out).
    const std::size_t left = text.size() - std::min(pos, text.size());
    if (count > 0 && dim > left / sizeof(float))
      throw Error(path + ": header announces vectors of dimension " + std::to_string(dim) +
                  ", more than the file's " + std::to_string(left) +
                  " bytes hold (truncated file?)");
    values.resize(count > 0 ? dim : 0);
    const std::size_t bytes = dim * sizeof(float);
    sink.begin("word2vec-binary", dim, std::min(count, left / (bytes + 2)));
    for (std::size_t n = 0; n < count; ++n) {
      while (pos < text.size() && (text[pos] == '\n' || text[pos] == '\r')) ++pos;
      std::size_t space = text.find(' ', pos);
      const std::string where = path + ": entry " + std::to_string(n + 1);
      if (pos >= text.size())
        throw Error(where + ": truncated file: header announces " + std::to_string(count) +
                    " words, found " + std::to_string(n));
      if (space == std::string_view::npos || space - pos > 1000)
        throw Error(where + ": truncated or malformed entry (no word followed by a space)");
      std::string_view word = text.substr(pos, space - pos);
      if (word.empty()) throw Error(where + ": empty word");
      pos = space + 1;
      if (text.size() - pos < bytes)
        throw Error(where + " (word " + quoted(word) + "): truncated file: expected " +
                    std::to_string(dim) + " float32 values");
      progress(pos);
      if (!sink.wanted(word)) {
        pos += bytes;
        continue;
      }
      std::memcpy(values.data(), text.data() + pos, bytes);
      pos += bytes;
      for (std::size_t d = 0; d < dim; ++d)
        if (!std::isfinite(values[d]))
          throw Error(where + " (word " + quoted(word) + "): NaN or infinite value at component " +
                      std::to_string(d + 1));
      if (!magnitude_ok(values.data(), dim))
        throw Error(where + " (word " + quoted(word) +
                    "): vector too large (squared norm >= 1e30)");
      sink.entry(word, values.data());
    }
    while (pos < text.size() && (text[pos] == '\n' || text[pos] == '\r')) ++pos;
    if (pos < text.size())
      throw Error(path + ": " + std::to_string(text.size() - pos) + " unexpected bytes after the " +
                  std::to_string(count) + " entries the header announces");
    return count;
  }

  std::size_t line_no = 1;
  std::size_t line_dim = 0;  // known from the first entry
  std::vector<std::string_view> fields;
  std::size_t entries = 0;
  if (!has_header) {
    pos = 0;
    line_no = 0;
  }
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    ++line_no;
    progress(pos);
    // Every line's shape is checked (a word, then the dimension's count of values); the values
    // are parsed only where the word is wanted, and on the first line, which sets the dimension.
    std::size_t b = 0;
    while (b < line.size() && is_space(line[b])) ++b;
    std::size_t w = b;
    while (w < line.size() && !is_space(line[w])) ++w;
    if (w == b) continue;
    const std::string_view word = line.substr(b, w - b);
    std::size_t n = 0;
    for (std::size_t i = w; i < line.size(); ++i) n += !is_space(line[i]) && is_space(line[i - 1]);
    const bool sets_dim = line_dim == 0;
    if (sets_dim) {
      if (!has_header && n == 0)
        throw Error(path + ":" + std::to_string(line_no) +
                    ": expected a word followed by its vector");
      line_dim = has_header ? dim : n;
    }
    if (n != line_dim)
      throw Error(path + ":" + std::to_string(line_no) + ": wrong dimension: word " + quoted(word) +
                  " has " + std::to_string(n) + " values, expected " + std::to_string(line_dim));
    ++entries;
    const bool keep = sink.wanted(word);
    if (sets_dim) {  // only now: a header's dimension is checked against a line first
      values.resize(line_dim);
      // A line takes a word and dim values, each with a separator: no more can fit.
      const std::size_t fit = text.size() / (2 * line_dim + 1);
      sink.begin(has_header ? "text" : "text-no-header", line_dim,
                 has_header ? std::min(count, fit) : 0);
    } else if (!keep) {
      continue;
    }
    const std::string where = path + ":" + std::to_string(line_no);
    split_fields(line, fields);
    for (std::size_t d = 0; d < line_dim; ++d) {
      std::string_view f = fields[d + 1];
      auto r = std::from_chars(f.data(), f.data() + f.size(), values[d]);
      if (r.ec == std::errc::result_out_of_range)
        throw Error(where + ": value " + quoted(f) + " of word " + quoted(fields[0]) +
                    " is out of float range");
      if (r.ec != std::errc() || r.ptr != f.data() + f.size())
        throw Error(where + ": non-numeric value " + quoted(f) + " for word " + quoted(fields[0]));
      if (!std::isfinite(values[d]))
        throw Error(where + ": NaN or infinite value for word " + quoted(fields[0]));
    }
    if (!magnitude_ok(values.data(), line_dim))
      throw Error(where + ": vector of word " + quoted(fields[0]) +
                  " too large (squared norm >= 1e30)");
    if (keep) sink.entry(word, values.data());
  }
  if (entries == 0) throw Error(path + ": no embeddings in file");
  if (has_header && entries != count)
    throw Error(path + ": header announces " + std::to_string(count) + " words, file has " +
                std::to_string(entries) + (entries < count ? " (truncated file?)" : ""));
  return entries;
}

Embeddings Embeddings::load(const std::string& path, const WordSet* only) {
  if (FastTextModel::is_model(path)) {
    // A model as a table: the words wanted (seen or not), else its dictionary's.
    const std::unique_ptr<FastTextModel> model = FastTextModel::load(path);
    WordSet words;
    if (only == nullptr)
      for (std::size_t i = 0; i < model->words(); ++i) words.emplace(model->word(i));
    Embeddings e = select_vectors(*model, only != nullptr ? *only : words);
    e.format_ = model->format();
    e.source_ = path;
    e.file_words_ = model->words();
    return e;
  }
  const MappedFile file(path);
  if (is_indexed_embeddings(file)) return load_indexed_embeddings(file, only);
  // The entries wanted, into the Embeddings as they come.
  struct Into final : EmbeddingsSink {
    Embeddings& e;
    const WordSet* only;
    Into(Embeddings& to, const WordSet* words) : e(to), only(words) {}
    bool wanted(std::string_view word) const override {
      return only == nullptr || only->find(word) != only->end();
    }
    void begin(std::string_view format, std::size_t dim, std::size_t count) override {
      e.format_ = format;
      e.dim_ = dim;
      e.vectors_.reserve((only ? std::min(only->size(), count) : count) * dim);
    }
    void entry(std::string_view word, const float* values) override { e.add(word, values); }
  };
  Embeddings e;
  e.source_ = path;
  Into into(e, only);
  e.file_words_ = scan_embeddings(file, into);
  return e;
}

}  // namespace lcrwmd
