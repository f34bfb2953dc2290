#pragma once
// Crash points for the durability tests: a process whose environment names a point in
// LCRWMD_CRASH_AT ("name", or "name#N" for its N-th pass, 1-based) kills itself with SIGKILL
// there, as a power cut or `kill -9` would stop it. Unset (always, outside the tests): nothing.
namespace lcrwmd {

void fault_point(const char* name);

}  // namespace lcrwmd
