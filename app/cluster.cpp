#include "app/cluster.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "lcrwmd/error.h"

#ifdef LCRWMD_WITH_MPI
#include <mpi.h>
#endif

namespace lcrwmd::app {
namespace {

Cluster* g_current = nullptr;

// The launcher's word for how many processes this job has (OpenMPI, then PMI/PMIx).
int launched_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 1;
}

#ifdef LCRWMD_WITH_MPI
void mpi_check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw Error(std::string("MPI error in ") + what);
}
#endif

}  // namespace

Cluster::Cluster(int& argc, char**& argv) {
  g_current = this;
  const int launched = launched_size();
#ifdef LCRWMD_WITH_MPI
  if (launched > 1) {
    mpi_check(MPI_Init(&argc, &argv), "MPI_Init");
    mpi_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
  }
#else
  (void)argc;
  (void)argv;
  if (launched > 1)
    throw Error("this lcrwmd was built without MPI, but mpirun started " +
                std::to_string(launched) + " processes: rebuild with OpenMPI (libopenmpi-dev)");
#endif
}

Cluster::~Cluster() {
#ifdef LCRWMD_WITH_MPI
  if (mpi_) MPI_Finalize();
#endif
  g_current = nullptr;
}

Cluster& Cluster::current() { return *g_current; }
bool Cluster::speaks() { return g_current == nullptr || g_current->root(); }

void Cluster::abort(int code) {
#ifdef LCRWMD_WITH_MPI
  if (mpi_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)code;
#endif
}

void Cluster::step(const std::function<void()>& f) {
  if (size_ == 1) {
    f();
    return;
  }
#ifdef LCRWMD_WITH_MPI
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  } catch (...) {
    error = "unknown error";
  }
  int failed = error.empty() ? 0 : 1, any = 0;
  mpi_check(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  if (!any) return;
  const std::vector<std::string> reasons = gather(error);
  if (root())
    for (std::size_t r = 0; r < reasons.size(); ++r)
      if (!reasons[r].empty())
        std::fprintf(stderr, "lcrwmd: error: rank %zu of %d: %s\n", r, size_, reasons[r].c_str());
  throw ClusterFailure{};
#else
  f();
#endif
}

void Cluster::broadcast(std::string& bytes) {
  if (size_ == 1) return;
#ifdef LCRWMD_WITH_MPI
  unsigned long long n = bytes.size();
  mpi_check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  bytes.resize(n);
  // In pieces below 2^31 bytes: MPI counts are ints.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < n; at += kPiece)
    mpi_check(MPI_Bcast(bytes.data() + at, static_cast<int>(std::min<std::size_t>(kPiece, n - at)),
                        MPI_BYTE, 0, MPI_COMM_WORLD),
              "MPI_Bcast");
#else
  (void)bytes;
#endif
}

void Cluster::barrier() {
#ifdef LCRWMD_WITH_MPI
  if (size_ > 1) mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
#endif
}

std::vector<std::string> Cluster::gather(const std::string& bytes) {
  if (size_ == 1) return {bytes};
  std::vector<std::string> out;
#ifdef LCRWMD_WITH_MPI
  // Sizes first, then each rank's bytes to rank 0 (point to point: no int-sized displacements).
  unsigned long long n = bytes.size();
  std::vector<unsigned long long> sizes(root() ? static_cast<std::size_t>(size_) : 0);
  mpi_check(MPI_Gather(&n, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
                       MPI_COMM_WORLD),
            "MPI_Gather");
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  if (root()) {
    out.resize(static_cast<std::size_t>(size_));
    out[0] = bytes;
    for (int r = 1; r < size_; ++r) {
      std::string& b = out[static_cast<std::size_t>(r)];
      b.resize(sizes[static_cast<std::size_t>(r)]);
      for (std::size_t at = 0; at < b.size(); at += kPiece)
        mpi_check(MPI_Recv(b.data() + at, static_cast<int>(std::min(kPiece, b.size() - at)),
                           MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv");
    }
  } else {
    for (std::size_t at = 0; at < bytes.size(); at += kPiece)
      mpi_check(MPI_Send(bytes.data() + at, static_cast<int>(std::min(kPiece, bytes.size() - at)),
                         MPI_BYTE, 0, 0, MPI_COMM_WORLD),
                "MPI_Send");
  }
#endif
  return out;
}

}  // namespace lcrwmd::app
