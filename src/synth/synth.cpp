#include "lcrwmd/synth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "lcrwmd/error.h"

namespace lcrwmd {
namespace {

// splitmix64: seeds an independent stream per document, so output is thread-count invariant.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(mix(seed)) {}
  std::uint64_t next() { return s_ = mix(s_); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t s_;
};

// Zipf(s) over ranks 0..n-1, sampled in O(1) with Vose's alias method: two random reads per
// draw instead of a binary search through a CDF that does not fit the cache.
class Zipf {
 public:
  Zipf(std::size_t n, double s) : prob_(n), alias_(n) {
    std::vector<double> p(n);
    double total = 0;
    for (std::size_t r = 0; r < n; ++r) total += p[r] = std::pow(static_cast<double>(r + 1), -s);
    std::vector<std::uint32_t> small, large;
    for (std::size_t r = 0; r < n; ++r) {
      p[r] *= static_cast<double>(n) / total;
      (p[r] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(r));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t l = small.back(), g = large.back();
      small.pop_back();
      prob_[l] = p[l];
      alias_[l] = g;
      p[g] -= 1.0 - p[l];
      if (p[g] < 1.0) {
        large.pop_back();
        small.push_back(g);
      }
    }
    for (std::uint32_t r : large) prob_[r] = 1.0, alias_[r] = r;
    for (std::uint32_t r : small) prob_[r] = 1.0, alias_[r] = r;  // rounding leftovers
  }
  std::size_t size() const { return prob_.size(); }
  std::uint32_t draw(Rng& rng) const {
    const std::uint64_t x = rng.next();
    const auto r = static_cast<std::uint32_t>((x >> 32) * prob_.size() >> 32);
    const double u = static_cast<double>(x & 0xffffffffu) * 0x1.0p-32;
    return u < prob_[r] ? r : alias_[r];
  }

 private:
  std::vector<double> prob_;
  std::vector<std::uint32_t> alias_;
};

// Distinct words (ascending) and their counts for one document. `taken` is all-false scratch
// of vocabulary size, left all-false.
void draw_document(const Zipf& zipf, double mean_h, Rng& rng, std::vector<std::uint32_t>& words,
                   std::vector<std::uint32_t>& counts, const std::vector<char>* allowed,
                   std::vector<char>& taken) {
  const double hd = mean_h * (0.5 + rng.uniform());
  const std::size_t vocab = zipf.size();
  const std::size_t h =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(hd)), 1, vocab);
  words.clear();
  std::size_t attempts = 0;
  while (words.size() < h && attempts++ < 50 * h) {
    const std::uint32_t u = zipf.draw(rng);
    if ((allowed && !(*allowed)[u]) || taken[u]) continue;
    taken[u] = 1;
    words.push_back(u);
  }
  for (std::uint32_t u : words) taken[u] = 0;
  std::sort(words.begin(), words.end());
  counts.resize(words.size());
  for (auto& c : counts) {
    c = 1;
    while (rng.uniform() < 0.4 && c < 20) ++c;
  }
}

std::string word_name(std::size_t u) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "w%zu", u);
  return buf;
}

}  // namespace

SynthOptions synth_preset(std::string_view name) {
  SynthOptions o;
  o.dim = 300;
  if (name == "set1") {
    o.docs = 1000000;
    o.vocab = 452058;
    o.words_per_doc = 107.5;
  } else if (name == "set2") {
    o.docs = 2800000;
    o.vocab = 292492;
    o.words_per_doc = 27.5;
  } else {
    throw Error("unknown preset '" + std::string(name) + "' (expected set1 or set2)");
  }
  return o;
}

SynthCorpus synthesize(const SynthOptions& o) {
  if (o.docs == 0 || o.vocab == 0 || o.dim == 0 || o.words_per_doc < 1)
    throw Error("synth: docs, vocab, dim and words-per-doc must be positive");
  if (o.vocab > std::numeric_limits<std::uint32_t>::max())
    throw Error("synth: vocabulary too large");
  const Zipf zipf(o.vocab, o.zipf_exponent);
  std::vector<std::vector<std::uint32_t>> words(o.docs), counts(o.docs);
#pragma omp parallel
  {
    std::vector<char> taken(o.vocab, 0);
#pragma omp for schedule(dynamic, 1024)
    for (std::size_t i = 0; i < o.docs; ++i) {
      Rng rng(o.seed * 0x100000001b3ull + i);
      draw_document(zipf, o.words_per_doc, rng, words[i], counts[i], nullptr, taken);
    }
  }
  // Compaction: keep the words that occur, in rank order.
  std::vector<char> used(o.vocab, 0);
  for (const auto& ws : words)
    for (std::uint32_t u : ws) used[u] = 1;
  std::vector<std::uint32_t> compact(o.vocab, 0);
  SynthCorpus out;
  IndexData& d = out.index;
  d.dim = o.dim;
  for (std::size_t u = 0; u < o.vocab; ++u)
    if (used[u]) {
      compact[u] = static_cast<std::uint32_t>(d.vocab.size());
      d.vocab.push_back(word_name(u));
    }
  const std::size_t v = d.vocab.size();
  d.vectors.resize(v * o.dim);
  const double scale = 4.0 / std::sqrt(static_cast<double>(o.dim));  // norms near 4, as word2vec
#pragma omp parallel for schedule(static)
  for (std::size_t u = 0; u < v; ++u) {
    Rng rng(~o.seed * 0x9e3779b97f4a7c15ull + u);
    for (std::size_t k = 0; k < o.dim; ++k)
      d.vectors[u * o.dim + k] = static_cast<float>(scale * rng.normal());
  }
  d.doc_freq.assign(v, 0);
  d.indptr.reserve(o.docs + 1);
  std::size_t nnz = 0;
  for (const auto& ws : words) nnz += ws.size();
  d.indices.reserve(nnz);
  d.values.reserve(nnz);
  std::vector<std::uint32_t> term_counts;  // the words as terms, for bm25
  term_counts.reserve(nnz);
  for (std::size_t i = 0; i < o.docs; ++i) {
    double total = 0;
    for (std::uint32_t c : counts[i]) total += c;
    for (std::size_t p = 0; p < words[i].size(); ++p) {
      const std::uint32_t u = compact[words[i][p]];
      term_counts.push_back(counts[i][p]);
      d.indices.push_back(u);
      d.values.push_back(static_cast<float>(counts[i][p] / total));
      ++d.doc_freq[u];
    }
    d.indptr.push_back(d.indices.size());
    std::vector<std::uint32_t>().swap(words[i]);
    std::vector<std::uint32_t>().swap(counts[i]);
    char id[32];
    std::snprintf(id, sizeof id, "doc%09zu", i);
    d.ids.emplace_back(id);
    d.labels.emplace_back();
  }
  set_terms(d, d.vocab, d.indptr, d.indices, term_counts);
  std::vector<std::uint32_t> qw, qc;
  std::vector<char> taken(o.vocab, 0);
  for (std::size_t q = 0; q < o.queries; ++q) {
    Rng rng(o.seed * 0x100000001b3ull + o.docs + q + 0x5eed);
    draw_document(zipf, o.words_per_doc, rng, qw, qc, &used, taken);
    RawDocument doc;
    doc.id = "query" + std::to_string(q);
    for (std::size_t p = 0; p < qw.size(); ++p)
      for (std::uint32_t c = 0; c < qc[p]; ++c) (doc.text += word_name(qw[p])) += ' ';
    doc.line = q + 1;
    out.queries.push_back(std::move(doc));
  }
  return out;
}

}  // namespace lcrwmd
