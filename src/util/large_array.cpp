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

}  // namespace

void* acquire(std::size_t bytes, std::size_t& capacity) {
  bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    // The smallest pooled mapping that fits without wasting more than half of it.
    auto best = p.free.end();
    for (auto it = p.free.begin(); it != p.free.end(); ++it)
      if (it->second >= bytes && it->second <= 2 * bytes &&
          (best == p.free.end() || it->second < best->second))
        best = it;
    if (best != p.free.end()) {
      void* ptr = best->first;
      capacity = best->second;
      p.bytes -= capacity;
      p.free.erase(best);
      return ptr;
    }
  }
  void* ptr = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
    // Over the limit: unmap the oldest mappings first.
    while (p.bytes > kPoolBytes) {
      evicted.push_back(p.free.front());
      p.bytes -= p.free.front().second;
      p.free.erase(p.free.begin());
    }
  }
  for (auto [q, n] : evicted) ::munmap(q, n);
}

}  // namespace lcrwmd::scratch
