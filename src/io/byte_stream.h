#pragma once
// Bytes written and read back field by field: the messages between the ranks of a distributed
// job (lcrwmd/wire.h, the sharded search's own). Counts are checked against the bytes left
// before anything is allocated, so a damaged message is an Error, never a huge allocation.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "lcrwmd/error.h"

namespace lcrwmd {

class Writer {
 public:
  template <typename T>
  void pod(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void strings(const std::vector<std::string>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    for (const std::string& s : v) {
      pod(static_cast<std::uint64_t>(s.size()));
      bytes_ += s;
    }
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <typename T>
  T pod() {
    T x;
    std::memcpy(&x, take(sizeof x), sizeof x);
    return x;
  }
  // Counts are checked against the bytes left before anything is allocated: a damaged
  // message is an error, never a huge allocation.
  template <typename T>
  std::vector<T> vec() {
    const auto n = count(sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::vector<std::string> strings() {
    std::vector<std::string> v(count(sizeof(std::uint64_t)));
    for (std::string& s : v) {
      const auto n = count(1);
      s.assign(take(n), n);
    }
    return v;
  }

 private:
  std::size_t count(std::size_t item_bytes) {
    const auto n = pod<std::uint64_t>();
    if (n > (b_.size() - at_) / item_bytes) truncated();
    return static_cast<std::size_t>(n);
  }
  [[noreturn]] static void truncated() {
    throw Error("distributed search: truncated message between ranks");
  }
  const char* take(std::size_t n) {
    if (n > b_.size() - at_) truncated();
    const char* p = b_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& b_;
  std::size_t at_ = 0;
};

}  // namespace lcrwmd
