// The cluster of this process, whatever the build: which one it is, and what the launcher says.
// The ranks' messages: cluster_mpi.cpp with MPI, cluster_local.cpp (one process) without.
#include "app/cluster.h"

#include <cstdlib>

#include "lcrwmd/gpu.h"

namespace lcrwmd::app {
namespace {

Cluster* g_current = nullptr;

}  // namespace

int Cluster::launched_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 1;
}

void Cluster::set_current(Cluster* c) { g_current = c; }
Cluster& Cluster::current() { return *g_current; }
bool Cluster::speaks() { return g_current == nullptr || g_current->root(); }

SearcherOptions for_rank(const Cluster& cluster, SearcherOptions options) {
  if (cluster.size() > 1 && options.backend != Backend::cpu) {
    const std::size_t devices = gpu_device_count();
    if (devices > 0) options.gpu.device = cluster.local_rank() % static_cast<int>(devices);
  }
  return options;
}

}  // namespace lcrwmd::app
