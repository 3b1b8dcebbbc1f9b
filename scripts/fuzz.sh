#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, docs/fuzzing.md) with clang-19, ASan and UBSan in
# build-fuzz/ and runs each for a bounded time from its seed corpus. Any finding (a crash, an
# exception other than tessel::Error, a sanitizer report, a leak, a timeout, a huge allocation)
# fails the script; the input that caused it is left in build-fuzz/findings/.
#   scripts/fuzz.sh [--seconds N] [target...]   N seconds per target (default 60)
#   scripts/fuzz.sh --runs N [target...]        N inputs per target from a fixed seed: the same
#                                               inputs on every run of the same code (CI)
#   scripts/fuzz.sh --seconds 3600              the long mode: an hour per target
# Targets: onnx npz package records input_shapes target (default: all, one after another).
set -euo pipefail
cd "$(dirname "$0")/.."

all=(onnx npz package records input_shapes target)
# Longest input per target: a few times its largest seed.
declare -A max_len=([onnx]=16384 [npz]=4096 [package]=131072 [records]=16384 [input_shapes]=256 [target]=512)

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
seconds=60
runs=0
targets=()
while (($#)); do
  case "$1" in
    --seconds)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --seconds needs a positive integer" >&2; exit 2; }
      seconds=$2
      shift 2
      ;;
    --runs)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --runs needs a positive integer" >&2; exit 2; }
      runs=$2
      shift 2
      ;;
    -h | --help) usage 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; usage 2 ;;
    *)
      [[ -v "max_len[$1]" ]] || { echo "fuzz: unknown target '$1' (known: ${all[*]})" >&2; exit 2; }
      targets+=("$1")
      shift
      ;;
  esac
done
((${#targets[@]})) || targets=("${all[@]}")

scripts/setup.sh --fuzz

# The build's output goes to a log; a terminal sees one line of ninja's progress.
source scripts/lib.sh
build=build-fuzz
binaries=("${targets[@]/#/fuzz_}")
logged "fuzz: configuring $build/" "$build/logs/configure.log" \
  env CC=clang-19 CXX=clang++-19 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DTESSEL_FUZZ=ON -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCH=OFF
logged "fuzz: building ${binaries[*]}" "$build/logs/build.log" cmake --build "$build" --target "${binaries[@]}" -j"$(nproc)"

# Sanitizer reports end the run with the input saved; UBSan is built not to recover.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/findings" "$build/logs"
failed=()
for t in "${targets[@]}"; do
  # New inputs go to build-fuzz/corpus/<t> (kept between runs), not to the committed seeds.
  corpus=$build/corpus/$t
  ((runs)) && corpus=$build/corpus-fixed/$t && rm -rf "$corpus"  # from the seeds alone, every time
  mkdir -p "$corpus"
  # A fixed seed and count explore the same inputs every time, so CI fails only on what the code
  # under test changes; a time limit explores further on each run.
  if ((runs)); then budget=(-runs="$runs" -seed=1); else budget=(-max_total_time="$seconds"); fi
  args=("${budget[@]}" -max_len="${max_len[$t]}" -timeout=20 -rss_limit_mb=2048
        -artifact_prefix="$build/findings/$t-" -print_final_stats=1)
  [[ -f tests/fuzz/dicts/$t.dict ]] && args+=(-dict="tests/fuzz/dicts/$t.dict")
  if ((runs)); then what="$runs inputs from seed 1"; else what="$seconds s"; fi
  echo "fuzz: $t: running $what (log: $build/logs/$t.log)"
  rc=0
  start=$SECONDS
  nice -n 19 "$build/tests/fuzz/fuzz_$t" "${args[@]}" "$corpus" "tests/fuzz/corpus/$t" >"$build/logs/$t.log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/logs/$t.log" | tail -n 1)
  if ((rc == 0)); then
    echo "fuzz: $t: ${runs:-?} executions in $((SECONDS - start)) s, no finding"
  else
    echo "fuzz: $t: FINDING after ${runs:-?} executions (exit $rc); the last lines of $build/logs/$t.log:"
    grep -v '^#[0-9]' "$build/logs/$t.log" | tail -n 40
    failed+=("$t")
  fi
done
# The closing line in the form CI reads: targets without a finding, and with one.
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}: reproduce with $build/tests/fuzz/fuzz_TARGET $build/findings/FILE" >&2
  exit 1
fi
