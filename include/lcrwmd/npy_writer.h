#pragma once
// A float32 matrix in NumPy's .npy format (version 1.0), written row block by row block.
#include <cstddef>
#include <string>

#include "lcrwmd/atomic_file.h"

namespace lcrwmd {

class NpyWriter {
 public:
  NpyWriter(const std::string& path, std::size_t rows, std::size_t cols);
  void append_rows(const float* data, std::size_t n_rows);
  void commit();  // checks that every row was written, then renames into place

 private:
  AtomicFile file_;
  std::size_t rows_, cols_, written_ = 0;
};

}  // namespace lcrwmd
