#!/usr/bin/env bash
# Installs everything lcrwmd needs to build and test, from Debian packages only.
#   scripts/install-deps.sh            build and test
#   scripts/install-deps.sh --results  also matplotlib, Xapian's Python bindings, Lucene 8 with a
#                                      JDK and WordNet, Stream VByte, for bench/'s figures,
#                                      retrieval tasks and peers (not needed by the build, the
#                                      tests or CI)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PKGS=(build-essential cmake pkg-config libopenblas-openmp-dev libdnnl-dev libcli11-dev zlib1g-dev
      libxxhash-dev libutf8proc-dev libfasttext-dev fasttext liblemon-dev nlohmann-json3-dev libcpp-httplib-dev libgtest-dev libgmock-dev clang-format clang libclang-rt-14-dev
      libopenmpi-dev openmpi-bin chromium chromium-driver python3-selenium
      pybind11-dev python3-dev python3-pytest python3-numpy python3-scipy python3-pot
      python3-gensim python3-pyemd python3-sklearn python3-testfixtures python3-pip python3-setuptools python3-wheel python3-venv)
if [ "${1:-}" = "--results" ]; then
  PKGS+=(python3-matplotlib python3-xapian liblucene8-java default-jdk-headless wordnet-base
        libstreamvbyte-dev)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
