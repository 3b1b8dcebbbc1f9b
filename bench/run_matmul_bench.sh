#!/usr/bin/env bash
# Builds and runs the matmul benchmark, then prints the markdown table for docs/benchmarks.md.
#   bench/run_matmul_bench.sh [--target="llvm -mcpu=haswell"] [--tile=MRxNR] [--prepacked] [Google Benchmark flags]
# --target compiles Tessel's kernels for another ISA (the AVX2 table on an AVX-512 machine; hold
# OpenBLAS to its Haswell kernels with OPENBLAS_CORETYPE=Haswell for that comparison; OpenBLAS
# 0.3.21 does not know Zen 5: hold it to its AVX-512 kernels there with OPENBLAS_CORETYPE=SkylakeX).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh >&2
logged "matmul bench: configuring build/" build/logs/configure.log \
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_BUILD_BENCH=ON >&2
logged "matmul bench: building matmul_bench" build/logs/build.log \
  cmake --build build -j"$(nproc)" --target matmul_bench >&2
out=$(mktemp --suffix=.json)
build/bench/matmul_bench --benchmark_out="$out" --benchmark_out_format=json "$@" >&2
[[ -s $out ]] || { echo "run_matmul_bench.sh: no benchmark ran (see --benchmark_filter)" >&2; exit 1; }
python3 bench/matmul_report.py "$out"
