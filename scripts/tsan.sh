#!/usr/bin/env bash
# The concurrent parts under ThreadSanitizer: the service's micro-batcher, a collection searched
# while a writer adds, deletes and compacts, and `lcrwmd serve` taking documents while it
# searches (python/tests/test_serve_writes.py and test_serve.py against a TSan build of the
# command line). Built in build-tsan/ (gcc, -fsanitize=thread). OpenMP runs one thread:
# Debian's libgomp is not instrumented, so its own synchronisation would read as races.
# Not part of CI (a TSan build and run take about half an hour on two cores).
#   scripts/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DLCRWMD_WITH_CUDA=OFF -DLCRWMD_WITH_MPI=OFF -DLCRWMD_BUILD_PYTHON=OFF \
  -DLCRWMD_BUILD_BENCH=OFF -DLCRWMD_NATIVE=OFF >/dev/null
cmake --build build-tsan -j "$(nproc)" --target lcrwmd_cli lcrwmd_tests
export OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/scripts/tsan.supp"
build-tsan/tests/lcrwmd_tests --gtest_filter='MicroBatcher*:Collection.SearchesWhileAWriterChangesIt:Collection.MergeLaterDoesWhatAddsWouldHave:Collection.ASecondWriterWaitsThenFails'
# The service under test is the TSan binary; the tests' own helpers use the release module.
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target lcrwmd_python_package
PYTHONPATH=build/python LCRWMD_CLI=$PWD/build-tsan/lcrwmd LCRWMD_SOURCE_DIR=$PWD \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests/test_serve_writes.py \
  python/tests/test_serve.py
