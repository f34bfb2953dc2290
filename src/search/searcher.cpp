// What every backend shares: the option checks, the backends' names, and make_searcher (the
// backend resolved once, into the searcher that keeps its state).
#include "lcrwmd/searcher.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

void check_k(std::size_t k) {
  if (k == 0) throw OptionError("k", "k must be at least 1");
}

void check_options(const SearchOptions& o) {
  if (std::isnan(o.max_distance))
    throw OptionError("max_distance", "not a number: give a distance (or none for all)");
  check_parameters(o.method, o.parameters);
  const MethodInfo& m = o.method.info();
  if (!m.has(o.direction))
    throw OptionError("direction", std::string(m.name) + " has no " + to_string(o.direction) +
                                       " form; " + m.name + ": " + direction_names(m));
}

bool runs_on_gpu(const SearchOptions& o) {
  return o.method->runs_on_gpu() && o.direction != Direction::query_to_document;
}

// Top-k leaving out options.skip where the backend cannot (the GPU's): the k + skipped best,
// the skipped ones dropped.
SearchResults Searcher::top_k_without_skipped(const QuerySet& queries, std::size_t k,
                                              const SearchOptions& options,
                                              SearchStats* stats) const {
  const std::span<const std::uint32_t> skip = options.skip;
  SearchOptions o = options;
  o.skip = {};
  const SearchResults all = top_k(queries, k + skip.size(), o, stats);
  SearchResults r = empty_results(all.n_queries, std::min(k, n_docs()));
  for (std::size_t q = 0; q < r.n_queries; ++q)
    for (std::size_t t = 0, kept = 0; t < all.k && kept < r.k; ++t) {
      const std::int64_t doc = all.indices[q * all.k + t];
      if (doc < 0 || std::binary_search(skip.begin(), skip.end(), static_cast<std::uint32_t>(doc)))
        continue;
      r.indices[q * r.k + kept] = doc;
      r.distances[q * r.k + kept++] = all.distances[q * all.k + t];
    }
  return r;
}

SearchResults Searcher::search(const QuerySet& queries, std::size_t k, const SearchOptions& options,
                               SearchStats* stats) const {
  check_k(k);
  check_options(options);
  const std::span<const std::uint32_t> skip = options.skip;
  if (!ascending_below(skip, n_docs()))
    throw OptionError(
        "skip", "the documents to leave out must ascend, each below " + std::to_string(n_docs()));
  SearchResults r = skip.empty() || backend() == Backend::cpu
                        ? top_k(queries, k, options, stats)
                        : top_k_without_skipped(queries, k, options, stats);
  // Rows run in ascending distance: what lies beyond the range is each row's tail; for a
  // method without vectors (bm25), so are the documents that share no term with the query
  // (distance 0).
  const float limit = !options.method->vectors ? std::min(options.max_distance,
                                                          -std::numeric_limits<float>::denorm_min())
                                               : options.max_distance;
  if (limit < std::numeric_limits<float>::infinity())
    for (std::size_t i = 0; i < r.distances.size(); ++i)
      if (r.indices[i] >= 0 && !(r.distances[i] <= limit)) {
        r.indices[i] = -1;
        r.distances[i] = 0.0f;
      }
  return r;
}

void Searcher::pairwise(const QuerySet& queries, const SearchOptions& options, const RowSink& sink,
                        SearchStats* stats) const {
  check_options(options);
  all_distances(queries, options, sink, stats);
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::cpu:
      return "cpu";
    case Backend::cuda:
      return "cuda";
    case Backend::automatic:
      return "auto";
  }
  return "?";
}

Backend parse_backend(std::string_view s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda") return Backend::cuda;
  if (s == "auto") return Backend::automatic;
  throw Error("unknown backend '" + std::string(s) + "' (expected cpu, cuda or auto)");
}

Backend resolve_backend(Backend b, const SearchOptions& o) {
  const bool gpu = runs_on_gpu(o);
  if (b == Backend::cuda && !gpu) {
    if (!o.method->runs_on_gpu())
      throw OptionError("method", std::string(to_string(o.method)) +
                                      " runs on the CPU backend only (backend cpu or auto)");
    throw OptionError("direction", std::string(to_string(o.direction)) +
                                       " runs on the CPU backend only (backend cpu or auto)");
  }
  if (b != Backend::automatic) return b;
  return gpu && gpu_device_count() > 0 ? Backend::cuda : Backend::cpu;
}

SearchResults empty_results(std::size_t n_queries, std::size_t k) {
  SearchResults r;
  r.n_queries = n_queries;
  r.k = k;
  r.distances.assign(n_queries * k, 0.0f);
  r.indices.assign(n_queries * k, -1);
  return r;
}

SearchResults without_self(const SearchResults& r, std::span<const std::int64_t> self,
                           std::size_t k) {
  SearchResults out = empty_results(r.n_queries, std::min(k, r.k));
  for (std::size_t q = 0; q < r.n_queries; ++q) {
    std::size_t t = 0;
    for (std::size_t s = 0; s < r.k && t < out.k; ++s) {
      const std::int64_t doc = r.indices[q * r.k + s];
      if (doc == self[q]) continue;
      out.indices[q * out.k + t] = doc;
      out.distances[q * out.k + t] = r.distances[q * r.k + s];
      ++t;
    }
  }
  return out;
}

void accumulate(SearchStats& total, const SearchStats& s) {
  total.batches += s.batches;
  total.distances += s.distances;
  total.refined += s.refined;
  total.tightened += s.tightened;
  total.walked += s.walked;
  total.word_pairs += s.word_pairs;
  total.recomputed += s.recomputed;
  if (s.precision != Precision::automatic) total.precision = s.precision;
  total.backend = s.backend;
  total.device_chunks = std::max(total.device_chunks, s.device_chunks);  // per searcher
}

namespace {

// automatic on a machine with a GPU: the GPU for every method it runs, the CPU for the rest.
class GpuWithCpuFallback final : public Searcher {
 public:
  GpuWithCpuFallback(const Index& index, const SearcherOptions& o, const GpuOptions& gpu)
      : gpu_(index, gpu), cpu_(index, o.cpu) {}
  Backend backend() const override { return Backend::cuda; }
  const Index& index() const override { return gpu_.index(); }

 protected:
  void all_distances(const QuerySet& q, const SearchOptions& o, const RowSink& sink,
                     SearchStats* stats) const override {
    on(o).pairwise(q, o, sink, stats);
  }
  SearchResults top_k(const QuerySet& q, std::size_t k, const SearchOptions& o,
                      SearchStats* stats) const override {
    return on(o).search(q, k, o, stats);
  }

 private:
  const Searcher& on(const SearchOptions& o) const {
    return runs_on_gpu(o) ? static_cast<const Searcher&>(gpu_) : cpu_;
  }
  GpuIndex gpu_;
  CpuSearcher cpu_;
};

}  // namespace

std::unique_ptr<Searcher> make_searcher(const Index& index, const SearcherOptions& o) {
  // One precision for both backends where only the CPU's is named (a front end's
  // --precision): the GPU runs f32 and bf16 too, int8 only on the CPU.
  GpuOptions gpu = o.gpu;
  if (gpu.precision == Precision::automatic && o.cpu.precision != Precision::int8)
    gpu.precision = o.cpu.precision;
  switch (o.backend) {
    case Backend::cpu:
      return std::make_unique<CpuSearcher>(index, o.cpu);
    case Backend::cuda:
      if (o.cpu.precision == Precision::int8 && gpu.precision == Precision::automatic)
        throw OptionError("precision",
                          "precision int8 is the CPU backend's; the GPU's phase 1 runs in f32 or "
                          "bf16 (tf32 where allowed): use the cpu backend, or precision auto, "
                          "f32 or bf16");
      return std::make_unique<GpuIndex>(index, gpu);
    case Backend::automatic:
      // int8: the CPU's searches in it, the GPU's in the precision it picks.
      if (gpu_device_count() > 0) return std::make_unique<GpuWithCpuFallback>(index, o, gpu);
      return std::make_unique<CpuSearcher>(index, o.cpu);
  }
  throw Error("unknown backend");
}

}  // namespace lcrwmd
