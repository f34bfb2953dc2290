#include "util/fault_point.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace lcrwmd {
namespace {

struct CrashAt {
  std::string name;
  long pass = 1;
};

const CrashAt* crash_at() {
  static const CrashAt* const at = []() -> const CrashAt* {
    const char* env = std::getenv("LCRWMD_CRASH_AT");
    if (env == nullptr || *env == '\0') return nullptr;
    auto* c = new CrashAt{env};
    if (const auto hash = c->name.find('#'); hash != std::string::npos) {
      c->pass = std::atol(c->name.c_str() + hash + 1);
      c->name.resize(hash);
    }
    return c;
  }();
  return at;
}

}  // namespace

void fault_point(const char* name) {
  const CrashAt* at = crash_at();
  if (at == nullptr || at->name != name) return;
  static std::atomic<long> passes{0};
  if (++passes == at->pass) ::raise(SIGKILL);
}

}  // namespace lcrwmd
