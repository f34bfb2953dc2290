// Output under its final name only when complete: AtomicFile.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

namespace fs = std::filesystem;

// Files of `dir` other than `keep`: temporaries left behind.
std::size_t others(const fs::path& dir, const fs::path& keep) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path() != keep;
  return n;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = test::temp_dir() / name;
  fs::create_directories(d);
  return d;
}

TEST(AtomicFile, CommitPutsTheWholeFileInPlace) {
  const fs::path dir = fresh_dir("atomic_commit"), path = dir / "out.txt";
  {
    AtomicFile f(path.string());
    f.write("hello ");
    f.write(std::string("world\n"));
    EXPECT_EQ(f.position(), 12u);
    EXPECT_FALSE(fs::exists(path)) << "visible before commit";
    f.commit();
  }
  EXPECT_EQ(test::read_file(path), "hello world\n");
  EXPECT_EQ(others(dir, path), 0u);
}

TEST(AtomicFile, WithoutCommitNothingIsLost) {
  const fs::path dir = fresh_dir("atomic_abandon"), path = dir / "out.txt";
  std::ofstream(path) << "old contents";
  try {
    AtomicFile f(path.string());
    f.write("half of the new");
    throw Error("the computation failed");
  } catch (const Error&) {
  }
  EXPECT_EQ(test::read_file(path), "old contents");
  EXPECT_EQ(others(dir, path), 0u) << "the temporary must be removed";
}

TEST(AtomicFile, WriteAtPatchesAndAppendingGoesOn) {
  const fs::path dir = fresh_dir("atomic_patch"), path = dir / "out.bin";
  AtomicFile f(path.string());
  f.write("aaaaaaaa");
  f.write_at(2, "XY", 2);
  f.write("bb");
  f.commit();
  EXPECT_EQ(test::read_file(path), "aaXYaaaabb");
}

TEST(AtomicFile, AnUnwritableDirectoryIsAnErrorNamingThePath) {
  const std::string path = (test::temp_dir() / "no_such_dir" / "out.txt").string();
  try {
    AtomicFile f(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lcrwmd
