#pragma once
// The processes of one distributed job, as the library needs them: who this one is, and bytes
// from rank 0 to all and from all to rank 0. The command line's mpirun cluster is one; a program
// of its own can bring another (or a test, threads). Every rank must make the same calls in the
// same order (they are collective).
#include <string>
#include <vector>

namespace lcrwmd {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank 0's bytes, on every rank.
  virtual void broadcast(std::string& bytes) = 0;
  // Every rank's bytes, in rank order, on rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather(const std::string& bytes) = 0;
};

}  // namespace lcrwmd
