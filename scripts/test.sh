#!/usr/bin/env bash
# Set-up and the whole test suite: release build + tests, `pip install .` into a fresh venv,
# then the ASan/UBSan build + tests.
#   scripts/test.sh            all three
#   scripts/test.sh --quick    release build only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
if [ "${1:-}" != "--quick" ]; then
  scripts/pip-install-test.sh
  scripts/build.sh --sanitize
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$(nproc)")
fi
