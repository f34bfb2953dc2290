#pragma once
// A read-only memory map of a whole file; the unit every large reader starts from.
#include <cstddef>
#include <string>
#include <string_view>

namespace lcrwmd {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws Error naming the path
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // For a reader that goes through the file once, front to back: read ahead, and let go of
  // the pages of [from, to) once read (they leave this process's resident memory; the file is
  // intact), so that reading a file larger than memory keeps a small footprint.
  void read_sequentially() const;
  void release(std::size_t from, std::size_t to) const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace lcrwmd
