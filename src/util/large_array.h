#pragma once
// Uninitialised scratch for arrays of hundreds of MiB, mapped with transparent huge pages where
// the kernel offers them (madvise mode). On first use, page faults — one per 4 KiB page — cost
// more than the arithmetic that fills such an array; with 2 MiB pages they almost vanish.
#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <type_traits>

namespace lcrwmd {

template <typename T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  LargeArray() = default;
  explicit LargeArray(std::size_t n) { resize(n); }
  ~LargeArray() { release(); }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  // Contents are unspecified after a resize that grows the capacity.
  void resize(std::size_t n) {
    if (n > capacity_) {
      release();
      const std::size_t bytes = n * sizeof(T);
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      ::madvise(p, bytes, MADV_HUGEPAGE);  // advisory: ignored where unsupported
      data_ = static_cast<T*>(p);
      capacity_ = n;
    }
    size_ = n;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void release() {
    if (data_ != nullptr) ::munmap(data_, capacity_ * sizeof(T));
    data_ = nullptr;
    capacity_ = size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace lcrwmd
