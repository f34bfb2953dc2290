// NumPy .npy output (version 1.0, little-endian float32, C order), rows from several writers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "lcrwmd/error.h"
#include "lcrwmd/npy_writer.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

namespace fs = std::filesystem;

// The header's dict and the data, checked the way numpy reads them.
struct Npy {
  std::string dict;
  std::vector<float> data;
};
Npy parse(const std::string& bytes) {
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len =
      static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ((10 + len) % 64, 0u) << "the data must start 64-byte aligned";
  EXPECT_EQ(bytes[10 + len - 1], '\n');
  Npy n;
  n.dict = bytes.substr(10, len);
  n.data.resize((bytes.size() - 10 - len) / sizeof(float));
  std::memcpy(n.data.data(), bytes.data() + 10 + len, n.data.size() * sizeof(float));
  return n;
}

TEST(NpyWriter, HeaderAndRowsAsNumpyReadsThem) {
  const fs::path path = test::temp_dir() / "m.npy";
  NpyWriter w(path.string(), 3, 2);
  const float rows[] = {1.0f, -2.5f, 3.0f, 4.0f, 0.0f, 1e-30f};
  w.append_rows(rows, 2);
  w.append_rows(rows + 4, 1);
  w.commit();
  const Npy n = parse(test::read_file(path));
  EXPECT_NE(n.dict.find("'descr': '<f4'"), std::string::npos) << n.dict;
  EXPECT_NE(n.dict.find("'fortran_order': False"), std::string::npos);
  EXPECT_NE(n.dict.find("'shape': (3, 2)"), std::string::npos);
  EXPECT_EQ(n.data, std::vector<float>(rows, rows + 6));
}

TEST(NpyWriter, MissingRowsAreAnErrorAndNoFile) {
  const fs::path path = test::temp_dir() / "short.npy";
  {
    NpyWriter w(path.string(), 3, 1);
    const float one = 1.0f;
    w.append_rows(&one, 1);
    try {
      w.commit();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("wrote 1 of 3 rows"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace lcrwmd
