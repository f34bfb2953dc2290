#include "lcrwmd/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lcrwmd/error.h"
#include "util/fault_point.h"

namespace lcrwmd {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::vector<char> tmpl(path_.begin(), path_.end());
  const char suffix[] = ".tmp.XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof(suffix));
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw Error(path_ + ": cannot create output file: " + std::strerror(errno));
  tmp_ = tmpl.data();
  // mkstemp creates the file private (0600); give it the mode a plain create would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    ::close(fd);
    ::unlink(tmp_.c_str());
    throw Error(path_ + ": cannot open output file");
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::fail(const char* what) {
  throw Error(path_ + ": " + what + ": " + std::strerror(errno));
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) fail("write failed");
  written_ += bytes;
}

void AtomicFile::write_at(std::size_t offset, const void* data, std::size_t bytes) {
  if (std::fflush(file_) != 0 || std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0)
    fail("seek failed");
  if (std::fwrite(data, 1, bytes, file_) != bytes) fail("write failed");
  if (std::fseek(file_, 0, SEEK_END) != 0) fail("seek failed");
}

void AtomicFile::flush() {
  if (std::fflush(file_) != 0) fail("write failed");
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("write failed");
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    ::unlink(tmp_.c_str());
    fail("close failed");
  }
  fault_point("atomic-file:synced");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    errno = err;
    fail("cannot rename temporary file into place");
  }
  fault_point("atomic-file:renamed");
  // The rename is the directory's change: durable once the directory is synced too (a file
  // system that cannot sync a directory, EINVAL, has nothing more to do).
  const std::string::size_type slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path_.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open its directory to sync the rename");
  const int synced = ::fsync(fd), err = errno;
  ::close(fd);
  errno = err;
  if (synced != 0 && err != EINVAL) fail("cannot sync its directory");
}

}  // namespace lcrwmd
