#pragma once
// Makes the searcher of a backend, resolving that backend once:
//
//   SearcherOptions o;
//   o.backend = Backend::automatic;               // the GPU where one is present
//   std::unique_ptr<Searcher> s = make_searcher(index, o);
//   for (...) s->search(queries, 10, {});        // the GPU's resident set is kept
#include <memory>

#include "lcrwmd/cpu.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

// The backend `b` resolves to for a search: automatic becomes cuda where a device is present
// and the search runs there (runs_on_gpu), else cpu; an OptionError for cuda where it does not.
Backend resolve_backend(Backend b, const SearchOptions& options);
// Whether the CUDA backend runs such a search: the method runs there (MethodInfo::runs_on_gpu),
// in any direction but query-to-document (the CPU's).
bool runs_on_gpu(const SearchOptions& options);

struct SearcherOptions {
  Backend backend = Backend::cpu;
  CpuOptions cpu;
  GpuOptions gpu;
};

// cpu: a CpuSearcher. cuda: a GpuIndex (an error without a device, or with cpu.precision
// int8, which the GPU does not run; wmd searches are errors). Where gpu.precision is automatic,
// the GPU takes cpu.precision (f32 or bf16): one precision option for both backends.
// automatic: a GpuIndex where a device is present, whose wmd searches run on the CPU (stats say
// where each search ran), else a CpuSearcher. The index must outlive the searcher.
std::unique_ptr<Searcher> make_searcher(const Index& index, const SearcherOptions& options);

}  // namespace lcrwmd
