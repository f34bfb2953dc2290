// libFuzzer: the messages mpirun's ranks exchange (query sets, results). Any input is a message
// or an lcrwmd::Error, never a crash or a huge allocation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lcrwmd/error.h"
#include "lcrwmd/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)lcrwmd::unpack_queries(bytes);
  } catch (const lcrwmd::Error&) {
  }
  try {
    lcrwmd::SearchResults r;
    lcrwmd::SearchStats st;
    lcrwmd::unpack_results(bytes, r, st);
  } catch (const lcrwmd::Error&) {
  }
  return 0;
}
