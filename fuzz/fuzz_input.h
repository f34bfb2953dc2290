#pragma once
// The fuzzers' input as a file, for the readers that take a path: written to a file of this
// process's own, removed after the run.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace lcrwmd::fuzz {

class InputFile {
 public:
  InputFile(const std::uint8_t* data, std::size_t size)
      : path_("/tmp/lcrwmd-fuzz-" + std::to_string(::getpid())) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace lcrwmd::fuzz
