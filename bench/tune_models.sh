#!/usr/bin/env bash
# Tunes each zoo model for a time budget, compiles it untuned and with the records, and compares
# the two packages' run times; prints the command and a markdown table on stdout (progress on stderr).
#   bench/tune_models.sh [--minutes MIN] [--trials T] [--repeat R] [--number N] [--rounds K]
#                        [--build DIR] [--onnxruntime DIR] [--auto-schedule] [--keep-records DIR]
#                        [MODEL...]
# MODEL: a name in models/ (default: all four zoo models) or an .onnx path. MIN: tuning budget per
# model (default 2); T: tessel tune's --trials per task (with --auto-schedule the total over all
# tasks; its default when not given). Each package runs R timed batches of N runs; untuned and
# tuned alternate K times (default 10) and the best median of each counts: this VM has phases in
# which everything runs at half speed, and alternating short runs keeps one from deciding a
# comparison.
# --onnxruntime DIR: ONNX Runtime (npm's onnxruntime-node, installed into DIR with npm when it is
# not there yet; needs node and npm) runs the model too, in the same rounds, timed the same way
# (bench/onnxruntime_time.js), with as many threads as Tessel.
# --auto-schedule: tune with the auto-scheduler (`tessel tune --auto-schedule`) instead of the
# template tuner; its per-round progress lines (estimated model latency over time) go to stderr.
# --keep-records DIR: keep each model's records as DIR/NAME.json (for bench/ort_compare.sh
# --tuning-records DIR), replacing any there; by default they go to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=2 trials='' repeat=5 number=100 rounds=10 build=build ort_dir='' auto='' keep='' models=()
args="$*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --number) number=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --onnxruntime) ort_dir=$2; shift 2 ;;
    --auto-schedule) auto=--auto-schedule; shift ;;
    --keep-records) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tune_models.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || models=(resnet_mini mobilenet_mini transformer_block lstm_classifier)
tessel=$build/cli/tessel
[[ -x $tessel ]] || { echo "tune_models.sh: $tessel not found; build the 'tessel' target first" >&2; exit 1; }

source bench/model_bench_lib.sh
[[ -z $ort_dir ]] || install_onnxruntime "$ort_dir"
threads=${TESSEL_NUM_THREADS:-$(nproc)}

work=$(mktemp -d)
[[ -z $keep ]] || mkdir -p "$keep"
trap 'rm -rf "$work"' EXIT

rows=()
for m in "${models[@]}"; do
  model=$m
  [[ -f $model ]] || model=models/$m.onnx
  name=$(basename "$model" .onnx)
  records=${keep:-$work}/$name.json
  rm -f "$records"  # tessel tune appends to a records file
  tasks=$("$tessel" tune "$model" -o "$records" $auto --tasks list | tail -n +2 | wc -l)
  echo "== $name: $tasks tasks, tuning for $minutes min" >&2
  t0=$(now)
  "$tessel" tune "$model" -o "$records" $auto --time-budget "$minutes" ${trials:+--trials "$trials"} >&2
  tuned_min=$(echo "$(now) $t0" | awk '{ printf "%.1f", ($1 - $2) / 60 }')
  touch "$records"  # a model without tunable tasks leaves no records
  "$tessel" compile "$model" -o "$work/$name-untuned.tar" >&2
  "$tessel" compile "$model" -o "$work/$name-tuned.tar" --tuning-records "$records" >&2
  untuned='' tuned='' ort=''
  for ((round = 0; round < rounds; ++round)); do
    untuned=$(lower "$untuned" "$(tessel_ms "$tessel" "$work/$name-untuned.tar" "$repeat" "$number")")
    tuned=$(lower "$tuned" "$(tessel_ms "$tessel" "$work/$name-tuned.tar" "$repeat" "$number")")
    [[ -z $ort_dir ]] || ort=$(lower "$ort" "$(ort_ms "$model" "$threads" "$repeat" "$number")")
  done
  echo "   untuned $untuned ms, tuned $tuned ms${ort:+, ONNX Runtime $ort ms}" >&2
  row=$(echo "$name $tasks $tuned_min $untuned $tuned" |
        awk '{ printf "| %s | %d | %s | %.4f | %.4f | %.2fx |", $1, $2, $3, $4, $5, $4 / $5 }')
  [[ -z $ort_dir ]] || row+=$(echo "$ort $untuned $tuned" | awk '{ printf " %.4f | %.2fx | %.2fx |", $1, $1 / $2, $1 / $3 }')
  rows+=("$row")
done

echo "Command: \`bench/tune_models.sh${args:+ $args}\`; per model:"
echo "\`tessel tune MODEL -o RECORDS${auto:+ $auto} --time-budget $minutes${trials:+ --trials $trials}\`, \`tessel compile MODEL -o untuned.tar\`,"
echo "\`tessel compile MODEL -o tuned.tar --tuning-records RECORDS\`, then"
echo "\`tessel run PKG --print-time --repeat $repeat --number $number\` for untuned and tuned alternately,"
echo "$rounds times each; the best median of each."
if [[ -z $ort_dir ]]; then
  echo
  echo "| model | tasks | tuning minutes | untuned ms | tuned ms | speed-up |"
  echo "|---|---|---|---|---|---|"
else
  overhead=$(ort_call_ms "$threads" "$repeat" "$number")
  echo "ONNX Runtime $ort_version (npm's onnxruntime-node, its CPU provider, $threads intra-op threads, all graph"
  echo "optimizations) in the same rounds: \`node bench/onnxruntime_time.js MODEL --threads $threads --repeat $repeat"
  echo "--number $number\`. Its times include node's cost of a call, $overhead ms (an Abs of 60 floats timed the"
  echo "same way). \"vs ORT\" is ONNX Runtime's time over Tessel's: above 1, Tessel is faster."
  echo
  echo "| model | tasks | tuning minutes | untuned ms | tuned ms | speed-up | ONNX Runtime ms | untuned vs ORT | tuned vs ORT |"
  echo "|---|---|---|---|---|---|---|---|---|"
fi
printf '%s\n' "${rows[@]}"
