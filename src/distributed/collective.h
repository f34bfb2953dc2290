#pragma once
// How the searchers over ranks (RankShards, RankQueries) keep their steps collective: each rank
// sends its error (or nothing) with its part, rank 0 decides, and its verdict reaches every
// rank, so that no rank is left waiting in a step the others have left.
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "lcrwmd/communicator.h"
#include "lcrwmd/error.h"

namespace lcrwmd::collective {

// f's error, or empty.
template <typename F>
std::string attempt(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return *e.what() ? e.what() : "unknown error";
  }
}

// Rank 0's verdict on every rank: an Error everywhere where it is not empty.
inline void settle(Communicator& comm, std::string verdict) {
  comm.broadcast(verdict);
  if (!verdict.empty()) throw Error(verdict);
}

// The first rank's error among the gathered ones, worded for all.
inline std::string first_error(const std::vector<std::string>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty())
      return "rank " + std::to_string(r) + " of " + std::to_string(errors.size()) + ": " +
             errors[r];
  return {};
}

// Rank 0's bytes on every rank, after every rank's errors were gathered: an Error on all where
// any rank failed (so a step's failure never leaves a rank waiting for the broadcast).
inline void settle_errors(Communicator& comm, const std::string& error) {
  const std::vector<std::string> errors = comm.gather(error);
  settle(comm, comm.rank() == 0 ? first_error(errors) : std::string());
}

}  // namespace lcrwmd::collective
