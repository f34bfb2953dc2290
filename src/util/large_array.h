#pragma once
// Uninitialised scratch for arrays of hundreds of MiB. First touch of fresh memory costs a
// page fault and the kernel's zeroing per page — more than the arithmetic that fills such an
// array — so mappings use transparent huge pages where offered, and released mappings are kept
// in a small process-wide pool for the next batch or query to reuse (as GPU libraries keep
// temporary memory), up to kPoolBytes. A request no pooled mapping fits grows the largest
// smaller one (its pages stay: on a VM whose host backs memory lazily a fresh page costs
// ~2.5 ms/MB, BENCHMARKS.md); the others stay pooled.
#include <cstddef>
#include <type_traits>

namespace lcrwmd {

namespace scratch {
inline constexpr std::size_t kPoolBytes = std::size_t{3} << 30;
void* acquire(std::size_t bytes, std::size_t& capacity);  // throws std::bad_alloc
void release(void* p, std::size_t capacity);
void trim();  // hands every pooled mapping back to the system
}  // namespace scratch

// `bytes` of memory a long-lived table keeps (a vocabulary rounded for phase 1, read whole by
// every query): on transparent huge pages where offered, so that reading it costs a TLB entry
// per 2 MiB (measured: 0.92-0.99x a typed query-to-document query's whole runs), and handed back
// to the system with its owner (no pool). Uninitialised.
class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  explicit HugePageBuffer(std::size_t bytes);  // throws std::bad_alloc
  ~HugePageBuffer();
  HugePageBuffer(HugePageBuffer&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr, o.bytes_ = 0;
  }
  HugePageBuffer& operator=(HugePageBuffer&& o) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  LargeArray() = default;
  explicit LargeArray(std::size_t n) { resize(n); }
  ~LargeArray() { reset(); }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  // Contents are unspecified after a resize that grows the capacity.
  void resize(std::size_t n) {
    if (n * sizeof(T) > capacity_) {
      reset();
      data_ = static_cast<T*>(scratch::acquire(n * sizeof(T), capacity_));
    }
    size_ = n;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void reset() {
    if (data_ != nullptr) scratch::release(data_, capacity_);
    data_ = nullptr;
    capacity_ = size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // bytes
};

}  // namespace lcrwmd
