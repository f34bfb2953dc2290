#!/usr/bin/env bash
# Packs what a GPU machine without Debian's packages (e.g. the project's lent H100/H200, which
# cannot install anything) needs to run the CUDA tests and benchmarks: release binaries built
# for any x86-64 (the default: CPU kernels chosen at run time, src/cpu/simd.h) and the
# shared libraries they load, except glibc's and CUDA's own (the GPU machine brings those),
# into gpu-bundle/ (git-ignored; ~96 MiB, oneDNN and OpenBLAS the most of it), and the same
# packed as gpu-bundle.tar.xz (~17 MiB) for a machine the checkout is copied to. There:
#   tar -xJf gpu-bundle.tar.xz
#   bench/gpu_check.sh gpu-bundle /tmp/gpu-check-logs   # correctness, a few minutes
#   bench/gpu.sh /tmp/lcrwmd-gpu gpu-bundle             # the figures
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DLCRWMD_NATIVE=OFF -DCMAKE_CXX_FLAGS= \
  -DLCRWMD_WITH_MPI=OFF -DLCRWMD_BUILD_PYTHON=OFF >/dev/null
cmake --build build-gpu -j "$(nproc)" --target lcrwmd_cli lcrwmd_bench lcrwmd_tests
rm -rf gpu-bundle
mkdir -p gpu-bundle/lib
cp build-gpu/lcrwmd build-gpu/lcrwmd_bench build-gpu/tests/lcrwmd_tests gpu-bundle/
for bin in gpu-bundle/lcrwmd gpu-bundle/lcrwmd_bench gpu-bundle/lcrwmd_tests; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so|/libcu|/libnvJitLink' |
  xargs -I{} cp -L {} gpu-bundle/lib/
du -sh gpu-bundle
tar -cf - gpu-bundle | xz -T0 -6 >gpu-bundle.tar.xz
du -sh gpu-bundle.tar.xz
