#!/usr/bin/env bash
# Builds and runs the matmul benchmark, then prints the markdown table for docs/benchmarks.md.
#   bench/run_matmul_bench.sh [extra Google Benchmark flags]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_BUILD_BENCH=ON
cmake --build build -j"$(nproc)" --target matmul_bench
out=$(mktemp --suffix=.json)
build/bench/matmul_bench --benchmark_out="$out" --benchmark_out_format=json "$@" >&2
python3 bench/matmul_report.py "$out"
