#!/usr/bin/env bash
# Builds tune_bench and tessel, runs the tuning benchmarks (single-op kernels against Eigen, the
# tuners at equal trials, the zoo models tuned end to end) and rewrites the section of
# docs/benchmarks.md between <!-- tuning-bench:begin --> and <!-- tuning-bench:end --> (markers
# appended when missing) with the tables, the date, the CPU and the commands. Run on a quiet
# machine: at the defaults it measures several thousand candidates (hours on 2 cores).
#   bench/run_tuning_bench.sh [--trials N] [--tuner-trials N] [--seeds K] [--tuners LIST]
#                             [--minutes MIN] [--filter S] [--tuner-filter S] [--models "A B"]
#                             [--onnxruntime DIR] [--skip-build]
# --trials, --filter: tune_bench kernels (trials per kernel; only kernels whose name contains S);
# --tuner-trials, --seeds, --tuners, --tuner-filter: tune_bench tuners; --minutes, --models:
# tune_models.sh (tuning budget per model; --onnxruntime: ONNX Runtime from DIR beside the models);
# --skip-build: use the binaries already in build/.
set -euo pipefail
cd "$(dirname "$0")/.."

trials=200 tuner_trials=200 seeds=3 tuners=xgb,ga,random,grid minutes=2 filter='' tuner_filter='' models='' ort_dir='' build=1
args="$*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --trials) trials=$2; shift 2 ;;
    --tuner-trials) tuner_trials=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --tuners) tuners=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --tuner-filter) tuner_filter=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --onnxruntime) ort_dir=$2; shift 2 ;;
    --skip-build) build=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_tuning_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [[ $build == 1 ]]; then
  scripts/setup.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_BUILD_BENCH=ON
  cmake --build build -j"$(nproc)" --target tune_bench tessel
fi

kernels_cmd=(build/bench/tune_bench kernels --trials "$trials" --markdown)
tuners_cmd=(build/bench/tune_bench tuners --trials "$tuner_trials" --seeds "$seeds" --tuners "$tuners" --markdown)
[[ -z $filter ]] || kernels_cmd+=(--filter "$filter")
[[ -z $tuner_filter ]] || tuners_cmd+=(--filter "$tuner_filter")
models_cmd=(bench/tune_models.sh --minutes "$minutes")
[[ -z $ort_dir ]] || models_cmd+=(--onnxruntime "$ort_dir")
# shellcheck disable=SC2206  # --models is a space-separated list
models_cmd+=($models)

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== ${kernels_cmd[*]}" >&2
"${kernels_cmd[@]}" >"$out/kernels.md"
echo "== ${tuners_cmd[*]}" >&2
"${tuners_cmd[@]}" >"$out/tuners.md"
echo "== ${models_cmd[*]}" >&2
"${models_cmd[@]}" >"$out/models.md"

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
threads=${TESSEL_NUM_THREADS:-$(nproc)}
{
  echo "## Template tuning: kernels, tuners, models"
  echo "\`bench/run_tuning_bench.sh${args:+ $args}\` on $(date +%F)."
  echo
  echo "CPU: $cpu, $(nproc) cores; $threads threads (TESSEL_NUM_THREADS or the core count) for Tessel and Eigen."
  echo
  echo "### Single-op kernels: untuned (fallback config) and tuned, against Eigen"
  echo "Command: \`${kernels_cmd[*]}\`. GFLOP/s from the tuner's own measurements (the fallback is"
  echo "measured in the same run); Eigen in the same process: a matrix product of the same shapes, for"
  echo "convolutions im2col + GEMM (per group; none for 1x1 stride-1), median of at least 50 ms of runs."
  echo
  cat "$out/kernels.md"
  echo
  echo "### Tuners at equal trials"
  echo "Command: \`${tuners_cmd[*]}\`."
  echo
  cat "$out/tuners.md"
  echo
  echo "### Zoo models, tuned end to end"
  cat "$out/models.md"
} >"$out/section.md"

python3 - docs/benchmarks.md "$out/section.md" <<'EOF'
import sys

doc_path, section_path = sys.argv[1], sys.argv[2]
begin, end = "<!-- tuning-bench:begin -->", "<!-- tuning-bench:end -->"
doc = open(doc_path).read()
if begin not in doc or end not in doc:
    doc = doc.rstrip("\n") + f"\n\n{begin}\n{end}\n"
head, rest = doc.split(begin, 1)
_, tail = rest.split(end, 1)
section = open(section_path).read().strip("\n")
open(doc_path, "w").write(f"{head}{begin}\n{section}\n{end}{tail}")
EOF
echo "updated docs/benchmarks.md" >&2
