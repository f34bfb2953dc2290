#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds lcrwmd.
#   scripts/build.sh              release build in build/
#   scripts/build.sh --sanitize   ASan + UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # The sanitizers watch the host code; CUDA's runtime does not run under ASan, so this build
  # leaves the CUDA backend out (the release build compiles and links it).
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCRWMD_SANITIZE=ON -DLCRWMD_BUILD_BENCH=OFF
         -DLCRWMD_WITH_CUDA=OFF)
else
  dir=build
  flags=(-DCMAKE_BUILD_TYPE=Release)
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
