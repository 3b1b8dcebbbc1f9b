#!/usr/bin/env bash
# Untuned compile time of ResNet-50 (224x224, random weights; written by make_zoo --resnet50) with
# the time of every stage, then its run time. Usage: bench/compile_time.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
model=${TMPDIR:-/tmp}/tessel-resnet50.onnx
"$build/tools/make_zoo" --resnet50 "$model"
time "$build/examples/run_model" "$model" --repeat 5
