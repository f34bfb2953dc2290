// A cluster of one process: the build without MPI (cluster_mpi.cpp has the other).
#include <string>

#include "app/cluster.h"
#include "lcrwmd/error.h"

namespace lcrwmd::app {

Cluster::Cluster(int& /*argc*/, char**& /*argv*/) {
  set_current(this);
  const int launched = launched_size();
  if (launched > 1) {
    set_current(nullptr);
    throw Error("this lcrwmd was built without MPI, but mpirun started " +
                std::to_string(launched) + " processes: rebuild with OpenMPI (libopenmpi-dev)");
  }
}

Cluster::~Cluster() { set_current(nullptr); }

void Cluster::abort(int /*code*/) {}
void Cluster::step(const std::function<void()>& f) { f(); }
void Cluster::broadcast(std::string& /*bytes*/) {}
void Cluster::barrier() {}
std::vector<std::string> Cluster::gather(const std::string& bytes) { return {bytes}; }

}  // namespace lcrwmd::app
