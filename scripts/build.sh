#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds lcrwmd.
#   scripts/build.sh              release build in build/
#   scripts/build.sh --sanitize   ASan + UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # The sanitizers watch our code: CUDA's runtime does not run under ASan, OpenMPI's
  # allocations at exit read as leaks, and Python would need the ASan runtime preloaded, so
  # this build leaves all three out (the release build has them and tests them).
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCRWMD_SANITIZE=ON -DLCRWMD_BUILD_BENCH=OFF
         -DLCRWMD_WITH_CUDA=OFF -DLCRWMD_WITH_MPI=OFF -DLCRWMD_BUILD_PYTHON=OFF)
else
  dir=build
  flags=(-DCMAKE_BUILD_TYPE=Release)
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
