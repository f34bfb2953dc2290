#!/usr/bin/env bash
# Fails when a C++ source differs from clang-format's layout (.clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format --dry-run --Werror
