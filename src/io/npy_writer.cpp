#include "lcrwmd/npy_writer.h"

#include <cstdint>

#include "lcrwmd/error.h"

namespace lcrwmd {

NpyWriter::NpyWriter(const std::string& path, std::size_t rows, std::size_t cols)
    : file_(path), rows_(rows), cols_(cols) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + "), }";
  const std::size_t unpadded = 10 + dict.size() + 1;  // magic, version, length, dict, '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  const auto len = static_cast<std::uint16_t>(dict.size());
  const char preamble[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  file_.write(preamble, 8);
  const unsigned char le[2] = {static_cast<unsigned char>(len & 0xff),
                               static_cast<unsigned char>(len >> 8)};
  file_.write(le, 2);
  file_.write(dict);
}

void NpyWriter::append_rows(const float* data, std::size_t n_rows) {
  file_.write(data, n_rows * cols_ * sizeof(float));
  written_ += n_rows;
}

void NpyWriter::commit() {
  if (written_ != rows_)
    throw Error("npy: wrote " + std::to_string(written_) + " of " + std::to_string(rows_) +
                " rows");
  file_.commit();
}

}  // namespace lcrwmd
