// A build without the CUDA toolkit: no devices, and a GpuIndex explains why it cannot exist.
#include "lcrwmd/error.h"
#include "lcrwmd/gpu.h"

namespace lcrwmd {

bool built_with_cuda() { return false; }
std::size_t gpu_device_count() { return 0; }
GpuDevice gpu_device(int id) {
  throw Error("no CUDA device " + std::to_string(id) + ": this lcrwmd was built without CUDA");
}
std::vector<GpuDevice> gpu_devices() { return {}; }

struct GpuIndex::Impl {};

GpuIndex::GpuIndex(const Index&, const GpuOptions&) {
  throw Error(
      "this lcrwmd was built without CUDA (LCRWMD_WITH_CUDA=OFF or no CUDA toolkit); "
      "use --backend cpu");
}
GpuIndex::GpuIndex(GpuIndex&&) noexcept = default;
GpuIndex& GpuIndex::operator=(GpuIndex&&) noexcept = default;
GpuIndex::~GpuIndex() = default;

SearchResults GpuIndex::top_k(const QuerySet&, std::size_t, const SearchOptions&,
                              SearchStats*) const {
  return {};
}
void GpuIndex::all_distances(const QuerySet&, const SearchOptions&, const RowSink&,
                             SearchStats*) const {}
const GpuDevice& GpuIndex::device() const {
  static const GpuDevice none;
  return none;
}
std::size_t GpuIndex::chunks() const { return 0; }
std::size_t GpuIndex::resident_bytes() const { return 0; }
Precision GpuIndex::precision() const { return Precision::f32; }
std::size_t GpuIndex::uploads() const { return 0; }
void GpuIndex::set_allow_tf32(bool) {}
const Index& GpuIndex::index() const {
  throw Error("this lcrwmd was built without CUDA");  // unreachable: no GpuIndex exists
}

}  // namespace lcrwmd
