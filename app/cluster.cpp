// The cluster of this process, whatever the build: which one it is, and what the launcher says.
// The ranks' messages: cluster_mpi.cpp with MPI, cluster_local.cpp (one process) without.
#include "app/cluster.h"

#include <cstdlib>

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

}  // namespace lcrwmd::app
