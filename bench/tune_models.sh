#!/usr/bin/env bash
# Tunes each zoo model for a time budget, compiles it untuned and with the records, and compares
# the two packages' run times; prints the command and a markdown table on stdout (progress on stderr).
#   bench/tune_models.sh [--minutes MIN] [--repeat R] [--number N] [--rounds K] [--build DIR] [MODEL...]
# MODEL: a name in models/ (default: all four zoo models) or an .onnx path. MIN: tuning budget per
# model (default 2). Each package runs R timed batches of N runs; untuned and tuned alternate K
# times (default 10) and the best median of each counts: this VM has phases in which everything
# runs at half speed, and alternating short runs keeps one from deciding a comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=2 repeat=5 number=100 rounds=10 build=build models=()
args="$*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --number) number=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tune_models.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || models=(resnet_mini mobilenet_mini transformer_block lstm_classifier)
tessel=$build/cli/tessel
[[ -x $tessel ]] || { echo "tune_models.sh: $tessel not found; build the 'tessel' target first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The median (ms) that `tessel run --print-time` reports.
median_ms() {
  "$tessel" run "$1" --print-time --repeat "$repeat" --number "$number" | awk '/median/ { getline; print $2 }'
}

now() { date +%s.%N; }
# The smaller of two numbers; the second when the first is empty.
lower() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }

rows=()
for m in "${models[@]}"; do
  model=$m
  [[ -f $model ]] || model=models/$m.onnx
  name=$(basename "$model" .onnx)
  records=$work/$name.json
  tasks=$("$tessel" tune "$model" -o "$records" --tasks list | tail -n +2 | wc -l)
  echo "== $name: $tasks tasks, tuning for $minutes min" >&2
  t0=$(now)
  "$tessel" tune "$model" -o "$records" --time-budget "$minutes" >&2
  tuned_min=$(echo "$(now) $t0" | awk '{ printf "%.1f", ($1 - $2) / 60 }')
  touch "$records"  # a model without tunable tasks leaves no records
  "$tessel" compile "$model" -o "$work/$name-untuned.tar" >&2
  "$tessel" compile "$model" -o "$work/$name-tuned.tar" --tuning-records "$records" >&2
  untuned='' tuned=''
  for ((round = 0; round < rounds; ++round)); do
    u=$(median_ms "$work/$name-untuned.tar")
    t=$(median_ms "$work/$name-tuned.tar")
    untuned=$(lower "$untuned" "$u")
    tuned=$(lower "$tuned" "$t")
  done
  echo "   untuned $untuned ms, tuned $tuned ms" >&2
  rows+=("$(echo "$name $tasks $tuned_min $untuned $tuned" |
            awk '{ printf "| %s | %d | %s | %.4f | %.4f | %.2fx |", $1, $2, $3, $4, $5, $4 / $5 }')")
done

echo "Command: \`bench/tune_models.sh${args:+ $args}\`; per model:"
echo "\`tessel tune MODEL -o RECORDS --time-budget $minutes\`, \`tessel compile MODEL -o untuned.tar\`,"
echo "\`tessel compile MODEL -o tuned.tar --tuning-records RECORDS\`, then"
echo "\`tessel run PKG --print-time --repeat $repeat --number $number\` for untuned and tuned alternately,"
echo "$rounds times each; the best median of each."
echo
echo "| model | tasks | tuning minutes | untuned ms | tuned ms | speed-up |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
