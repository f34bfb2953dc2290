// libFuzzer: a collection's manifest and deletion files (the first byte chooses which). Any input
// is read or is an lcrwmd::Error, never a crash or a huge allocation; a manifest read back
// writes as it reads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collection/collection_files.h"
#include "lcrwmd/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace c = lcrwmd::collection;
  try {
    if (data[0] % 2 == 0) {
      const c::Manifest m = c::parse_manifest(bytes, "fuzz");
      const std::string again = c::format_manifest(m);
      if (c::format_manifest(c::parse_manifest(again, "again")) != again) std::abort();
    } else {
      // The segment's size the file claims, so that its checks past the header are reached.
      std::uint64_t docs = 0;
      if (bytes.size() >= 16) std::memcpy(&docs, bytes.data() + 8, sizeof docs);
      (void)c::parse_deletions(bytes, docs, "fuzz");
    }
  } catch (const lcrwmd::Error&) {
  }
  return 0;
}
