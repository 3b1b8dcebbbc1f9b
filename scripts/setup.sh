#!/usr/bin/env bash
# Installs every Debian package that Tessel's build, tests and benchmarks need (the Python module:
# pybind11, numpy, pytest, setuptools; Graphviz for `tessel inspect --svg`; dpkg-dev for the .deb).
# Idempotent.
#   scripts/setup.sh          the build, tests and benchmarks (GCC)
#   scripts/setup.sh --fuzz   also clang-19 and its libFuzzer/sanitizer runtimes (scripts/fuzz.sh)
#   scripts/setup.sh --format clang-format-19 only (scripts/check_format.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
pkgs=(cmake ninja-build ccache g++ llvm-19-dev libfmt-dev libeigen3-dev libgtest-dev libgmock-dev
      libbenchmark-dev libdlpack-dev libopenblas-dev zlib1g-dev libzstd-dev libedit-dev libxml2-dev
      libffi-dev python3 libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
      nlohmann-json3-dev libarchive-dev libcli11-dev libzip-dev libxgboost-dev
      pybind11-dev python3-dev python3-numpy python3-pytest python3-setuptools python3-pip
      python3-venv graphviz dpkg-dev)
fuzz_pkgs=(clang-19 libclang-rt-19-dev)
case "${1:-}" in
  "") ;;
  --fuzz) pkgs+=("${fuzz_pkgs[@]}") ;;
  --format) pkgs=(clang-format-19) ;;
  *) echo "usage: scripts/setup.sh [--fuzz | --format]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  logged "setup: installing ${#missing[@]} packages" build/logs/setup.log \
    bash -c "$sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends ${missing[*]}"
fi
