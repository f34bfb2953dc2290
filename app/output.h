#pragma once
// Where a command's results go: a file, written to a temporary and renamed when all is in
// (AtomicFile), or stdout. `what` names the results in an error.
#include <cstdio>
#include <memory>
#include <string>

#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"

namespace lcrwmd::app {

// A distance as the commands print it: nine significant digits, enough to read back the same
// float.
inline void append_distance(std::string& out, float d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(d));
  out += buf;
}

// Appends bytes to `file`, or to stdout where there is none.
inline void emit(const std::unique_ptr<AtomicFile>& file, const std::string& bytes,
                 const char* what) {
  if (file)
    file->write(bytes);
  else if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
    throw Error(std::string("cannot write ") + what + " to stdout");
}

// All is in: the file renamed into place, or stdout flushed.
inline void finish(const std::unique_ptr<AtomicFile>& file, const char* what) {
  if (file)
    file->commit();
  else if (std::fflush(stdout) != 0)
    throw Error(std::string("cannot write ") + what + " to stdout");
}

}  // namespace lcrwmd::app
