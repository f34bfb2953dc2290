#pragma once
// The processes of one command: several under mpirun, or just this one. The distributed
// commands run the same steps on every rank; after each step every rank learns whether any
// rank failed, rank 0 prints why, and all stop with a non-zero exit, so a failure never leaves
// a rank waiting in a collective.
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "lcrwmd/communicator.h"
#include "lcrwmd/error.h"
#include "lcrwmd/searcher.h"

namespace lcrwmd::app {

// Thrown on every rank when a step failed on some rank; rank 0 has printed the reasons.
struct ClusterFailure {};

class Cluster final : public Communicator {
 public:
  // Joins MPI where mpirun started this process (its environment says so); otherwise a
  // cluster of one, with no MPI involved.
  Cluster(int& argc, char**& argv);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool root() const { return rank_ == 0; }
  int local_rank() const { return local_rank_; }  // among the ranks on this machine

  // Runs f here; with several ranks, throws ClusterFailure on all of them if it threw on any.
  // A cluster of one lets f's exception through unchanged.
  void step(const std::function<void()>& f);
  // From rank 0 to all.
  void broadcast(std::string& bytes) override;
  void barrier();
  // Every rank's bytes, in rank order, on rank 0 (empty elsewhere).
  std::vector<std::string> gather(const std::string& bytes) override;

  // Ends every rank at once (MPI_Abort): for a failure outside step(), which the other ranks
  // cannot learn of. A cluster of one just returns.
  void abort(int code);

  // The cluster of this process (set by the constructor).
  static Cluster& current();
  // Whether this process speaks for the job (rank 0, or no cluster at all).
  static bool speaks();

 private:
  // The processes the launcher started (1 without mpirun).
  static int launched_size();
  static void set_current(Cluster* c);

  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool mpi_ = false;
};

// A collective step of the library's (RankShards, RankQueries), whose Error reaches every rank
// at once: rank 0 says it and every rank stops (ClusterFailure).
template <typename Step>
auto together(Step&& step) {
  try {
    return step();
  } catch (const Error& e) {
    if (Cluster::current().root()) std::fprintf(stderr, "lcrwmd: error: %s\n", e.what());
    throw ClusterFailure{};
  }
}

// The searcher options of this rank: with a GPU backend, the device of its local rank.
SearcherOptions for_rank(const Cluster& cluster, SearcherOptions options);

// Documents or queries [begin, end) of rank r when n are split into near-equal contiguous parts.
struct Part {
  std::size_t begin, end;
  std::size_t size() const { return end - begin; }
};
inline Part part_of(std::size_t n, int rank, int size) {
  const auto r = static_cast<std::size_t>(rank), p = static_cast<std::size_t>(size);
  return {n * r / p, n * (r + 1) / p};
}

}  // namespace lcrwmd::app
