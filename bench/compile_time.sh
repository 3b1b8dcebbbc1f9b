#!/usr/bin/env bash
# Wall time of `tessel compile`, per stage, for the zoo and two full-size architectures (ResNet-50
# and DenseNet-121 at 224x224 with random weights, written by make_zoo): cold (an empty kernel
# cache) and warm (every kernel cached), at 1 and 2 LLVM jobs. Prints a markdown table for
# docs/benchmarks.md. Usage: bench/compile_time.sh [BUILD_DIR] [TARGET]   (TARGET e.g.
# "llvm -mcpu=haswell"; default: the host CPU)
set -euo pipefail
build=${1:-build}
target=${2:-llvm -mcpu=native}
work=$(mktemp -d "${TMPDIR:-/tmp}/tessel-compile-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$build/tools/make_zoo" --resnet50 "$work/resnet50.onnx"
"$build/tools/make_zoo" --densenet121 "$work/densenet121.onnx"
models=(models/resnet_mini.onnx models/mobilenet_mini.onnx models/transformer_block.onnx
        models/lstm_classifier.onnx "$work/resnet50.onnx" "$work/densenet121.onnx")
stages=(import lower llvm link assemble "link library" "write package")

echo "target: $target; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
printf '| model | jobs | cache | wall (s) | printed (s) | graph passes (ms)'
printf ' | %s (ms)' "${stages[@]}"
printf ' |\n|---|---|---|---|---|---'
printf '|---%.0s' "${stages[@]}"
printf '|\n'
for model in "${models[@]}"; do
  for jobs in 1 2; do
    cache="$work/cache-$jobs-$(basename "$model")"
    for state in cold warm; do
      # A terminal on stderr makes tessel print its stage table.
      start=$(date +%s.%N)
      out=$(TESSEL_CACHE_DIR="$cache" script -qec \
        "$build/cli/tessel compile '$model' -o '$work/model.tar' -j $jobs --target '$target'" \
        /dev/null)
      wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
      printed=$(echo "$out" | sed -n 's/^wrote .* in \([0-9.]*\) s.*/\1/p')
      row=$(echo "$out" | tr -d '\r' | awk -v stages="$(IFS=';'; echo "${stages[*]}")" '
        /^  [a-z:_ ]+ +[0-9.]+ ms$/ {
          ms = $(NF - 1); name = $0; sub(/^  /, "", name); sub(/ +[0-9.]+ ms$/, "", name)
          if (name ~ /^graph:/) graph += ms; else t[name] = ms
        }
        END {
          printf "| %.0f", graph
          n = split(stages, s, ";")
          for (i = 1; i <= n; ++i) printf " | %s", (s[i] in t) ? sprintf("%.0f", t[s[i]]) : "<1"
        }')
      printf '| %s | %s | %s | %.2f | %s %s |\n' "$(basename "$model" .onnx)" "$jobs" "$state" \
        "$wall" "$printed" "$row"
    done
  done
done
