// make_searcher: the backend resolved once, into the searcher that keeps its state.
#include "lcrwmd/searcher.h"

#include <memory>

#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd {

namespace {

// automatic on a machine with a GPU: the GPU for every method it runs, the CPU for the rest.
class GpuWithCpuFallback final : public Searcher {
 public:
  GpuWithCpuFallback(const Index& index, const SearcherOptions& o)
      : gpu_(index, o.gpu), cpu_(index, o.cpu) {}
  SearchResults search(const QuerySet& q, std::size_t k, const SearchOptions& o,
                       SearchStats* stats) const override {
    return on(o).search(q, k, o, stats);
  }
  void pairwise(const QuerySet& q, const SearchOptions& o, const RowSink& sink,
                SearchStats* stats) const override {
    on(o).pairwise(q, o, sink, stats);
  }
  Backend backend() const override { return Backend::cuda; }
  const Index& index() const override { return gpu_.index(); }

 private:
  const Searcher& on(const SearchOptions& o) const {
    return describe(o.method).runs_on_gpu ? static_cast<const Searcher&>(gpu_) : cpu_;
  }
  GpuIndex gpu_;
  CpuSearcher cpu_;
};

}  // namespace

std::unique_ptr<Searcher> make_searcher(const Index& index, const SearcherOptions& o) {
  switch (o.backend) {
    case Backend::cpu:
      return std::make_unique<CpuSearcher>(index, o.cpu);
    case Backend::cuda:
      return std::make_unique<GpuIndex>(index, o.gpu);
    case Backend::automatic:
      if (gpu_device_count() > 0) return std::make_unique<GpuWithCpuFallback>(index, o);
      return std::make_unique<CpuSearcher>(index, o.cpu);
  }
  throw Error("unknown backend");
}

}  // namespace lcrwmd
