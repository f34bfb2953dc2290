// The ranks of an mpirun job (the build with MPI; cluster_local.cpp is the one without).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "app/cluster.h"
#include "lcrwmd/error.h"

namespace lcrwmd::app {
namespace {

void mpi_check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw Error(std::string("MPI error in ") + what);
}

}  // namespace

Cluster::Cluster(int& argc, char**& argv) {
  set_current(this);
  if (launched_size() > 1) {
    mpi_check(MPI_Init(&argc, &argv), "MPI_Init");
    mpi_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
  }
}

Cluster::~Cluster() {
  if (mpi_) MPI_Finalize();
  set_current(nullptr);
}

void Cluster::abort(int code) {
  if (mpi_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

void Cluster::step(const std::function<void()>& f) {
  if (size_ == 1) {
    f();
    return;
  }
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
}

void Cluster::broadcast(std::string& bytes) {
  if (size_ == 1) return;
  unsigned long long n = bytes.size();
  mpi_check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  bytes.resize(n);
  // In pieces below 2^31 bytes: MPI counts are ints.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < n; at += kPiece)
    mpi_check(MPI_Bcast(bytes.data() + at, static_cast<int>(std::min<std::size_t>(kPiece, n - at)),
                        MPI_BYTE, 0, MPI_COMM_WORLD),
              "MPI_Bcast");
}

void Cluster::barrier() {
  if (size_ > 1) mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

std::vector<std::string> Cluster::gather(const std::string& bytes) {
  if (size_ == 1) return {bytes};
  std::vector<std::string> out;
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
  return out;
}

}  // namespace lcrwmd::app
