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

  // Rows may also come from other processes (distributed pairwise): they write with
  // write_npy_rows() into temp_path() at data_offset() + row * cols * 4, and the owner counts
  // them in before commit().
  const std::string& temp_path() const { return file_.temp_path(); }
  std::size_t data_offset() const { return data_offset_; }
  void rows_written_elsewhere(std::size_t n_rows) { written_ += n_rows; }

 private:
  AtomicFile file_;
  std::size_t rows_, cols_, written_ = 0, data_offset_ = 0;
};

// Writes rows [first_row, first_row + n_rows) of a cols-wide float32 matrix into the temporary
// file of another process's NpyWriter.
void write_npy_rows(const std::string& temp_path, std::size_t data_offset, std::size_t cols,
                    std::size_t first_row, const float* data, std::size_t n_rows);

}  // namespace lcrwmd
