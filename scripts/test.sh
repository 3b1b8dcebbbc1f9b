#!/usr/bin/env bash
# Installs dependencies, builds Tessel and runs every test through ctest.
#   scripts/test.sh              RelWithDebInfo build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/ (unit tests; not the
#                                ONNX conformance sweeps)
#   scripts/test.sh --tsan       ThreadSanitizer build in build-tsan/ of the suites that run threads:
#                                the runtime (thread pool, models), codegen (the JIT) and driver
#                                (models compiled, copied and loaded from several threads); built
#                                without XGBoost (TESSEL_WITH_XGBOOST=OFF)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh

build=build
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
targets=()
filter=()
case "${1:-}" in
  "") ;;
  --sanitize)
    # The unit tests; the ONNX conformance sweeps (thousands of compiles) run in the normal build,
    # and so does the cost model's ranking test, which times kernels: in this unoptimized process
    # its measurements ranked 0.62 of pairs once, against 0.8-0.9 in the normal build.
    filter=(-E 'onnx_conformance|CostModelTest.RanksHeldBackProgramsBetterThanChance')
    build=build-asan
    args=(-DCMAKE_BUILD_TYPE=Debug -DTESSEL_SANITIZE=ON -DTESSEL_BUILD_BENCH=OFF)
    # Any ASan report (including a leak at exit) or UBSan report fails the test.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  --tsan)
    build=build-tsan
    # Without XGBoost, so that CI builds that configuration too: test_driver links the tuner
    # (tessel_driver -> tessel_autotune), which then has no xgb tuner.
    args=(-DCMAKE_BUILD_TYPE=Debug -DTESSEL_SANITIZE_THREAD=ON -DTESSEL_BUILD_BENCH=OFF
          -DTESSEL_WITH_XGBOOST=OFF)
    targets=(--target test_runtime test_codegen test_driver)
    # Only those suites: ctest lists every target not built as <target>_NOT_BUILT.
    filter=(-E '_NOT_BUILT$|^onnx_conformance')
    # Any report fails the test, except those with a frame in the uninstrumented libLLVM
    # (scripts/tsan.supp says why). The pool's fork test starts threads in the child, which TSan
    # refuses by default (the child runs only the pool there).
    export TSAN_OPTIONS="halt_on_error=1 die_after_fork=0 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
    ;;
  *)
    echo "usage: scripts/test.sh [--sanitize | --tsan]" >&2
    exit 2
    ;;
esac

logged "test: configuring $build/" "$build/logs/configure.log" cmake -S . -B "$build" -G Ninja "${args[@]}"
logged "test: building $build/" "$build/logs/build.log" cmake --build "$build" -j"$(nproc)" "${targets[@]}"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${filter[@]}"
