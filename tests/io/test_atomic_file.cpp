// Output under its final name only when complete: AtomicFile.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
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

// A disk that fills up mid-write (here: the process's file size limit): an error naming the
// file, the old contents intact, no temporary left.
TEST(AtomicFile, AFullDiskIsAnErrorAndTheOldFileStays) {
  const fs::path dir = fresh_dir("atomic_full"), path = dir / "out.bin";
  std::ofstream(path) << "old contents";
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  struct rlimit small = old_limit;
  small.rlim_cur = 1 << 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    AtomicFile f(path.string());
    const std::string block(1 << 20, 'x');
    for (int i = 0; i < 4; ++i) f.write(block);
    f.commit();
  } catch (const Error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find(path.string()), std::string::npos) << error;
  EXPECT_EQ(test::read_file(path), "old contents");
  EXPECT_EQ(others(dir, path), 0u) << "the temporary must be removed";
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
