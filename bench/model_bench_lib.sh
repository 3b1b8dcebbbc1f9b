# shellcheck shell=bash
# Shell helpers that the model benchmarks share (bench/tune_models.sh, bench/ort_compare.sh);
# sourced from the repository root.

ort_version=1.30.0  # onnxruntime-node

# Installs npm's onnxruntime-node into DIR unless it is there (needs node and npm) and points
# NODE_PATH at it, for bench/onnxruntime_time.js and bench/ort_check.js.
install_onnxruntime() {
  if [[ ! -d $1/node_modules/onnxruntime-node ]]; then
    # Its install script fetches GPU libraries; the CPU library ships in the package itself.
    npm install --prefix "$1" --ignore-scripts --no-save "onnxruntime-node@$ort_version" >&2
  fi
  export NODE_PATH=$1/node_modules
}

# tessel_ms TESSEL PKG REPEAT NUMBER: the median (ms) that `tessel run --print-time` reports
# (threads: TESSEL_NUM_THREADS, else every core).
tessel_ms() {
  "$1" run "$2" --print-time --repeat "$3" --number "$4" | awk '/median/ { getline; print $2 }'
}

# ort_ms MODEL THREADS REPEAT NUMBER: ONNX Runtime's median (ms), timed as tessel_ms times Tessel.
ort_ms() {
  node bench/onnxruntime_time.js "$1" --threads "$2" --repeat "$3" --number "$4"
}

# ort_call_ms THREADS REPEAT NUMBER: what one session.run costs in node beyond the model, timed
# as ort_ms times one: an Abs of 60 floats.
ort_call_ms() {
  ort_ms /usr/share/libonnx-testdata/data/node/test_abs/model.onnx "$@"
}

now() { date +%s.%N; }
# The smaller of two numbers; the second when the first is empty.
lower() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
# The median of the arguments (the mean of the middle two for an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'; }
