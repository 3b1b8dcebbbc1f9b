#!/usr/bin/env bash
# Tessel against ONNX Runtime on full-size architectures with random weights (make_zoo --NAME,
# tools/zoo_fullsize.cc): writes each model, compiles it with `tessel compile`, checks its outputs
# against ONNX Runtime's on one random input (bench/ort_check.js), then at 1 and 2 threads times
# both in interleaved rounds (Tessel, ORT, Tessel, ORT, ...) and prints the medians as a markdown
# table on stdout (progress on stderr), then a second table of the medians of the rounds' own
# Tessel/ORT ratios.
#   bench/ort_compare.sh --onnxruntime DIR [--models a,b,...] [--rounds K] [--target T]
#                        [--build BUILD] [--skip-build] [--tuning-records DIR]
# DIR: where npm's onnxruntime-node is installed when it is not there yet (needs node and npm).
# --models: models of `make_zoo` (default: the architectures of `make_zoo --list`; the kernel
# chains, e.g. softmax_chain, time one op's kernel); --rounds: timed rounds per engine and
# thread count (default 5); --target: passed to `tessel compile --target` (default: the host CPU);
# --skip-build: use BUILD's make_zoo and tessel as they are (default: build those two targets).
# --tuning-records DIR: compile each model that has records DIR/NAME.json with them (`tessel
# compile --tuning-records`; bench/tune_models.sh --keep-records DIR writes them); its row says
# "tuned".
# Each round runs `tessel run PKG --print-time` (TESSEL_NUM_THREADS=T) and
# `node bench/onnxruntime_time.js MODEL --threads T`, both with the same --repeat 5 --number N,
# N chosen so that a batch lasts about 60 ms at 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."

ort_dir='' models='' rounds=5 target='' build=build do_build=1 repeat=5 batch_ms=60 records_dir=''
args=''  # the command line as typed, for the table's header
for a in "$@"; do [[ $a == *' '* ]] && args+=" \"$a\"" || args+=" $a"; done
while [[ $# -gt 0 ]]; do
  case $1 in
    --onnxruntime) ort_dir=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --skip-build) do_build=0; shift ;;
    --tuning-records) records_dir=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ort_compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $ort_dir ]] || { echo "ort_compare.sh: --onnxruntime DIR is required (see --help)" >&2; exit 2; }
[[ $do_build == 0 ]] || cmake --build "$build" -j"$(nproc)" --target make_zoo tessel >&2
tessel=$build/cli/tessel make_zoo=$build/tools/make_zoo
source bench/model_bench_lib.sh
install_onnxruntime "$ort_dir"
if [[ -n $models ]]; then models=${models//,/ }; else models=$("$make_zoo" --list | xargs); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tessel-ort-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
llvm_target='' rows=() ratios_1=() ratios_2=() failures=()
paired_rows=() paired_1=() paired_2=()  # medians of the rounds' own ratios
for name in $models; do
  model=$work/$name.onnx pkg=$work/$name.tar
  echo "== $name" >&2
  "$make_zoo" "--$name" "$model"
  records=${records_dir:+$records_dir/$name.json} label=$name
  [[ -n $records && -f $records ]] && label="$name (tuned)" || records=''
  if ! out=$("$tessel" compile "$model" -o "$pkg" ${target:+--target "$target"} \
               ${records:+--tuning-records "$records"} 2>&1); then
    echo "$out" >&2
    failures+=("$name: tessel compile failed: $(echo "$out" | grep -m1 -i error || echo "$out" | tail -1)")
    rows+=("| $label | compile failed | | | | | | | | |")
    continue
  fi
  # "wrote PKG (N kernels for TRIPLE -mcpu=CPU) in S s": the CPU LLVM compiled for.
  llvm_target=$(echo "$out" | sed -n 's/^wrote .* kernels for \(.*\)) in .*/\1/p')
  if check=$(node bench/ort_check.js "$model" "$pkg" --tessel "$tessel" 2>&1); then
    diff=$(echo "$check" | sed -n 's/.* \/ max |ORT| \([^ ]*\) ok$/\1/p' | sort -g | tail -1)
  else
    diff="mismatch"
    failures+=("$name: outputs differ from ONNX Runtime's: $check")
  fi
  echo "$check" >&2
  # Runs per batch: about batch_ms of work at 2 threads, from a short first measurement.
  first=$(TESSEL_NUM_THREADS=2 tessel_ms "$tessel" "$pkg" 3 1)
  number=$(awk -v t="$first" -v b="$batch_ms" 'BEGIN { n = int(b / t + 0.5); print (n < 1 ? 1 : (n > 1000 ? 1000 : n)) }')
  row="| $label"
  for threads in 1 2; do
    # Each round's ratio is its Tessel time over the ONNX Runtime time measured right after it: the
    # VM's slow phases, seconds long, then fall on both sides of a ratio, not on one engine's median.
    tessel_times=() ort_times=() round_ratios=()
    for ((round = 0; round < rounds; ++round)); do
      tessel_times+=("$(TESSEL_NUM_THREADS=$threads tessel_ms "$tessel" "$pkg" "$repeat" "$number")")
      ort_times+=("$(ort_ms "$model" "$threads" "$repeat" "$number")")
      round_ratios+=("$(awk -v t="${tessel_times[round]}" -v o="${ort_times[round]}" 'BEGIN { print t / o }')")
    done
    t=$(median "${tessel_times[@]}") o=$(median "${ort_times[@]}") p=$(median "${round_ratios[@]}")
    echo "   $threads thread(s), $rounds rounds of $repeat x $number runs: Tessel $t ms (${tessel_times[*]})," \
         "ONNX Runtime $o ms (${ort_times[*]}); the rounds' ratios ${round_ratios[*]}, median $p" >&2
    declare "tessel_$threads=$t" "ort_$threads=$o" "paired_$threads=$p"
    row+=$(awk -v t="$t" -v o="$o" 'BEGIN { printf " | %.3f | %.3f | %.2f", t, o, t / o }')
  done
  ratios_1+=("$(awk -v t="$tessel_1" -v o="$ort_1" 'BEGIN { print t / o }')")
  ratios_2+=("$(awk -v t="$tessel_2" -v o="$ort_2" 'BEGIN { print t / o }')")
  row+=$(awk -v t1="$tessel_1" -v t2="$tessel_2" -v o1="$ort_1" -v o2="$ort_2" \
           'BEGIN { printf " | %.2fx | %.2fx", t1 / t2, o1 / o2 }')
  rows+=("$row | $diff |")
  paired_1+=("$paired_1") paired_2+=("$paired_2")
  paired_rows+=("$(awk -v l="$label" -v a="$paired_1" -v b="$paired_2" 'BEGIN { printf "| %s | %.2f | %.2f |", l, a, b }')")
done

# The geometric mean of the arguments.
geomean() { [[ $# -gt 0 ]] || { echo "-"; return; }; printf '%s\n' "$@" | awk '{ s += log($1) } END { printf "%.2f", exp(s / NR) }'; }
# The vector ISA that LLVM targets for triple $1, CPU $2 and -mattr $3: what llc makes of a 16-float add
# (zmm: AVX-512) and an 8-int add (vpaddd on ymm: AVX2). `tessel compile` prints LLVM's CPU name
# but not Tessel's CpuModel; both read the same LLVM features.
isa() {
  local llc asm
  llc=$(command -v llc-19 || command -v llc) || { echo "unknown ISA"; return; }
  asm=$(printf '%s\n' 'define <16 x float> @f(<16 x float> %a, <16 x float> %b) #0 {' \
          '  %c = fadd <16 x float> %a, %b' '  ret <16 x float> %c' '}' \
          'define <8 x i32> @g(<8 x i32> %a, <8 x i32> %b) {' '  %c = add <8 x i32> %a, %b' \
          '  ret <8 x i32> %c' '}' 'attributes #0 = { "min-legal-vector-width"="512" }' |
        "$llc" -mtriple="$1" -mcpu="$2" ${3:+-mattr="$3"} -o - 2>/dev/null) ||
    { echo "unknown ISA"; return; }
  if grep -q zmm <<<"$asm"; then echo "AVX-512, 512-bit vectors"
  elif grep -q 'vpaddd.*ymm' <<<"$asm"; then echo "AVX2, 256-bit vectors"
  elif grep -q ymm <<<"$asm"; then echo "AVX, 256-bit vectors"
  else echo "SSE, 128-bit vectors"; fi
}
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
llvm_cpu=${llvm_target##*-mcpu=}
mattr=$(sed -n 's/.*-mattr=\([^ ]*\).*/\1/p' <<<"$target")
echo "Command: \`bench/ort_compare.sh$args\` on $(date +%F). CPU: $cpu, $(nproc) cores (load average"
echo "$load_before before the run, $(cut -d' ' -f1-3 /proc/loadavg) after). Tessel target \`${target:-llvm -mcpu=native}\`: LLVM"
echo "compiles for \`$llvm_target\` ($(isa "${llvm_target%% -mcpu=*}" "$llvm_cpu" "$mattr")). ONNX Runtime $ort_version"
echo "(npm's onnxruntime-node, CPU provider, all graph optimizations, sequential execution); its times include"
echo "node's cost of a session.run call, $(ort_call_ms 1 "$repeat" 1000) ms at 1 thread (an Abs of 60 floats timed the same way)."
echo "Medians of $rounds interleaved rounds per thread count; a round times $repeat batches of N runs of each"
echo "(N from the model's latency) and takes their median. Tessel/ORT is Tessel's time over ONNX Runtime's:"
echo "below 1, Tessel is faster. 2T/1T is each engine's speed-up from a second thread. \"max diff\" is the"
echo "largest |Tessel - ORT| over the output's largest magnitude on one random input."
echo
echo "| model | Tessel 1T ms | ORT 1T ms | Tessel/ORT 1T | Tessel 2T ms | ORT 2T ms | Tessel/ORT 2T | Tessel 2T/1T | ORT 2T/1T | max diff |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "| geometric mean | | | $(geomean "${ratios_1[@]}") | | | $(geomean "${ratios_2[@]}") | | | |"
echo
echo "The same rounds paired: the median over the rounds of each round's Tessel/ORT (its Tessel time over"
echo "the ONNX Runtime time measured right after it), which a slow phase of the VM moves less than it moves"
echo "one engine's median."
echo
echo "| model | Tessel/ORT 1T, median of the rounds' ratios | 2T |"
echo "|---|---|---|"
printf '%s\n' "${paired_rows[@]}"
echo "| geometric mean | $(geomean "${paired_1[@]}") | $(geomean "${paired_2[@]}") |"
if [[ ${#failures[@]} -gt 0 ]]; then
  echo
  printf -- '- %s\n' "${failures[@]}"
fi
