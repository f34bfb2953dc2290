#include "util/large_array.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace lcrwmd::scratch {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct Pool {
  std::mutex mutex;
  std::vector<std::pair<void*, std::size_t>> free;  // mapping, bytes
  std::size_t bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: buffers may be released during exit
  return *p;
}

// Requests are rounded up to size classes 1/8 of a power of two apart (at most 12.5% slack),
// so batches of slightly different sizes land on the same pooled mapping.
std::size_t size_class(std::size_t bytes) {
  std::size_t pow2 = kHugePage;
  while (pow2 < bytes) pow2 *= 2;
  const std::size_t step = std::max(kHugePage, pow2 / 16);
  return (bytes + step - 1) / step * step;
}

}  // namespace

void* acquire(std::size_t bytes, std::size_t& capacity) {
  bytes = size_class(bytes);
  std::pair<void*, std::size_t> grow{nullptr, 0};
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    // The smallest pooled mapping that fits. (Pooled mappings were all live once, so reuse
    // never lifts the footprint above its past peak.) Not one more than twice the request:
    // a small buffer taking a large mapping leaves the large buffer that comes next (symmetric
    // LC-RWMD's word-distance cache, batch after batch) to fault in fresh pages.
    auto best = p.free.end(), below = p.free.end();
    for (auto it = p.free.begin(); it != p.free.end(); ++it) {
      if (it->second >= bytes && it->second <= 2 * bytes &&
          (best == p.free.end() || it->second < best->second))
        best = it;
      if (it->second < bytes && (below == p.free.end() || it->second > below->second)) below = it;
    }
    if (best != p.free.end()) {
      void* ptr = best->first;
      capacity = best->second;
      p.bytes -= capacity;
      p.free.erase(best);
      return ptr;
    }
    // None fits: the largest smaller one grows, as its pages are already there (a batch's
    // arrays grow a little from one batch to the next). The others stay pooled for the
    // requests they fit; only much larger ones left: a mapping of its own.
    if (below != p.free.end()) {
      grow = *below;
      p.bytes -= below->second;
      p.free.erase(below);
    }
  }
  void* ptr = MAP_FAILED;
  if (grow.first != nullptr) {
    ptr = ::mremap(grow.first, grow.second, bytes, MREMAP_MAYMOVE);
    if (ptr == MAP_FAILED) ::munmap(grow.first, grow.second);
  }
  if (ptr == MAP_FAILED)
    ptr = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ptr == MAP_FAILED) throw std::bad_alloc();
  ::madvise(ptr, bytes, MADV_HUGEPAGE);  // advisory: ignored where unsupported
  capacity = bytes;
  return ptr;
}

void release(void* ptr, std::size_t capacity) {
  Pool& p = pool();
  std::vector<std::pair<void*, std::size_t>> evicted;
  {
    std::lock_guard lock(p.mutex);
    p.free.emplace_back(ptr, capacity);
    p.bytes += capacity;
    while (p.bytes > kPoolBytes) {  // oldest first
      evicted.push_back(p.free.front());
      p.bytes -= p.free.front().second;
      p.free.erase(p.free.begin());
    }
  }
  for (auto [q, n] : evicted) ::munmap(q, n);
}

void trim() {
  std::vector<std::pair<void*, std::size_t>> unused;
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    unused.swap(p.free);
    p.bytes = 0;
  }
  for (auto [q, n] : unused) ::munmap(q, n);
}

}  // namespace lcrwmd::scratch

namespace lcrwmd {

HugePageBuffer::HugePageBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advisory: ignored where unsupported
  data_ = static_cast<std::byte*>(p);
}

HugePageBuffer::~HugePageBuffer() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = o.data_, bytes_ = o.bytes_;
    o.data_ = nullptr, o.bytes_ = 0;
  }
  return *this;
}

}  // namespace lcrwmd
