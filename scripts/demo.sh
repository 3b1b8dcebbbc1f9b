#!/usr/bin/env bash
# The main job: installs dependencies, builds, then
#  1. compiles the bundled ONNX model models/resnet_mini.onnx and runs it, printing the fused
#     kernels, the compile time per stage, the outputs and the latency;
#  2. runs the te matmul demo: lowered loop IR and GFLOP/s of a default and a hand-scheduled
#     1024^3 matmul.
#   scripts/demo.sh [MODEL.onnx]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh
logged "demo: configuring build/" build/logs/configure.log cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
logged "demo: building build/" build/logs/build.log cmake --build build -j"$(nproc)" --target run_model te_matmul_demo
build/examples/run_model "${1:-models/resnet_mini.onnx}"
echo
build/examples/te_matmul_demo
