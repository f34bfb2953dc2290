#pragma once
// Output that appears under its final name only when complete: written to a temporary file
// beside the target, flushed and synced, renamed, then the directory synced, so that a
// committed file survives a crash or a power loss. A failure or an exception leaves no partial
// file and whatever was under the name before.
#include <cstddef>
#include <cstdio>
#include <string>

namespace lcrwmd {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void write(const std::string& s) { write(s.data(), s.size()); }
  void write_at(std::size_t offset, const void* data, std::size_t bytes);
  std::size_t position() const { return written_; }
  // Pushes what write() buffered to the temporary file.
  void flush();
  // The temporary file, for a library that writes by file name (it is what commit() renames
  // into place), or for a scratch file another reads by name (never committed, so removed).
  const std::string& temporary_path() const { return tmp_; }
  void commit();

 private:
  void fail(const char* what);
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
  std::size_t written_ = 0;
};

}  // namespace lcrwmd
