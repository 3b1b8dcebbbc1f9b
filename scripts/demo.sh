#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs the te matmul demo, which prints the
# lowered loop IR and the GFLOP/s of an untuned and a hand-scheduled 1024^3 matmul.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target te_matmul_demo
build/examples/te_matmul_demo "$@"
