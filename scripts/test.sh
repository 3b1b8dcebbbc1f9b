#!/usr/bin/env bash
# Installs dependencies, builds Tessel and runs every test through ctest.
#   scripts/test.sh              RelWithDebInfo build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/ (unit tests; not the
#                                ONNX conformance sweeps)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

build=build
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
exclude=()
if [[ "${1:-}" == "--sanitize" ]]; then
  # The unit tests; the ONNX conformance sweeps (thousands of compiles) run in the normal build.
  exclude=(-E onnx_conformance)
  build=build-asan
  args=(-DCMAKE_BUILD_TYPE=Debug -DTESSEL_SANITIZE=ON -DTESSEL_BUILD_BENCH=OFF)
  # Any ASan report (including a leak at exit) or UBSan report fails the test.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

cmake -S . -B "$build" -G Ninja "${args[@]}"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${exclude[@]}"
