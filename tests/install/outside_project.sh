#!/usr/bin/env bash
# Tessel as its users get it: installed into a prefix, then examples/ built as an outside project.
#   outside_project.sh install      BUILD_DIR SOURCE_DIR WORK   cmake --install into WORK/prefix
#   outside_project.sh headers      BUILD_DIR SOURCE_DIR WORK   the headers leak no LLVM/ONNX/protobuf
#   outside_project.sh find_package BUILD_DIR SOURCE_DIR WORK   find_package(Tessel): build, run
#   outside_project.sh runtime_only BUILD_DIR SOURCE_DIR WORK   load_package against the runtime
#                                                               alone: tessel-runtime.pc, and
#                                                               find_package(... COMPONENTS runtime)
#   outside_project.sh cleanup      BUILD_DIR SOURCE_DIR WORK   removes what install made
# Each ctest run works in a folder of its own under WORK (named by ctest's process id, the
# parent of every test), so that two runs in one build tree do not remove each other's prefix.
set -euo pipefail
mode=$1 build=$2 src=$3 work=$4/run-$PPID
prefix=$work/prefix
inc=$prefix/include/tessel
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Quiet configure and build; their output only when they fail.
quiet() {
  local log
  log=$(mktemp)
  "$@" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; fail "$*"; }
  rm -f "$log"
}

case $mode in
  install)
    rm -rf "$work"
    quiet cmake --install "$build" --prefix "$prefix"
    for f in bin/tessel include/tessel/driver/compile.h; do
      [[ -e $prefix/$f ]] || fail "$f is not installed"
    done
    for f in 'libtessel_runtime.*' TesselConfig.cmake tessel-runtime.pc; do
      [[ -n $(find "$prefix/" -name "$f") ]] || fail "$f is not installed"
    done
    "$prefix/bin/tessel" --help | grep -q compile || fail "the installed tessel --help"
    ;;
  headers)
    if grep -rnE '#include [<"](llvm|onnx|google/protobuf|xgboost)/' "$inc"; then
      fail "installed headers include LLVM, ONNX, protobuf or XGBoost headers"
    fi
    # Every Tessel header an installed header includes is installed too.
    while read -r h; do
      [[ -f $inc/$h ]] || fail "an installed header includes $h, which is not installed"
    done < <(grep -rhoE '^#include "[^"]+"' "$inc" | sed -E 's/.*"(.*)"/\1/' | sort -u)
    # Tessel::runtime's headers, compiled against the prefix alone, open nothing of LLVM or ONNX.
    tu=$work/runtime_headers.cc
    (cd "$inc" && printf '#include "%s"\n' ir/*.h runtime/*.h) >"$tu"
    opened=$(c++ -std=c++20 -fsyntax-only -H -I"$inc" "$tu" 2>&1) || fail "$opened"
    if grep -E 'llvm|onnx|protobuf' <<<"$opened"; then fail "runtime headers open the above"; fi
    echo "headers: $(find "$inc" -name '*.h' | wc -l) installed, none leaks"
    ;;
  find_package)
    out=$work/find_package
    quiet cmake -S "$src/examples" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix"
    quiet cmake --build "$out" -j2
    "$out/te_matmul_demo" 64 | grep -E "hand schedule|max \|difference\|"
    "$out/run_model" "$src/models/resnet_mini.onnx" --repeat 2 | grep -E "^output 'prob'"
    "$prefix/bin/tessel" compile "$src/models/resnet_mini.onnx" -o "$out/model.tar" >/dev/null
    "$out/load_package" "$out/model.tar" | grep "output 'prob': 10 elements of float32"
    ;;
  runtime_only)
    "$prefix/bin/tessel" compile "$src/models/resnet_mini.onnx" -o "$work/runtime.tar" >/dev/null
    pc=$(find "$prefix/" -name tessel-runtime.pc)
    for how in pkg_config component; do
      out=$work/$how
      flags=(-DTESSEL_EXAMPLES_PKGCONFIG=ON)
      [[ $how == component ]] && flags=(-DTESSEL_EXAMPLES_RUNTIME_ONLY=ON -DCMAKE_PREFIX_PATH="$prefix")
      PKG_CONFIG_PATH=$(dirname "$pc") quiet cmake -S "$src/examples" -B "$out" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release "${flags[@]}"
      quiet cmake --build "$out"
      if grep -E '^(LLVM|ONNX)_DIR:' "$out/CMakeCache.txt"; then fail "$how looked for LLVM or ONNX"; fi
      if ldd "$out/load_package" | grep -i llvm; then fail "$how: load_package links LLVM"; fi
      "$out/load_package" "$work/runtime.tar" | grep "output 'prob': 10 elements"
    done
    ;;
  cleanup) rm -rf "$work" ;;
  *) fail "unknown mode $mode" ;;
esac
echo "$mode: ok"
