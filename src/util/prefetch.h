#pragma once
// Asking for memory ahead of its use: rows read far apart (a vector, a cache row) would each
// wait on memory otherwise.
#include <cstddef>

namespace lcrwmd {

// Every 64-byte line of [p, p + bytes) asked for.
inline void prefetch_lines(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
}

}  // namespace lcrwmd
