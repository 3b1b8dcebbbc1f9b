# Shared by the scripts: run a noisy step (apt, CMake) with its output in a log file, showing a
# terminal only one line of progress; on failure, the log's tail and where the log is.
#   logged LABEL LOG COMMAND [ARG...]
logged() {
  local label=$1 log=$2
  shift 2
  mkdir -p "$(dirname "$log")"
  : >"$log"
  local start=$SECONDS rc=0
  [[ -t 1 ]] && printf '%s ...' "$label"
  "$@" 2>&1 | while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    if [[ -t 1 && "$line" =~ ^\[([0-9]+/[0-9]+)\] ]]; then printf '\r\033[K%s %s' "$label" "${BASH_REMATCH[1]}"; fi
  done || rc=$?
  [[ -t 1 ]] && printf '\r\033[K'
  if ((rc != 0)); then
    tail -n 40 "$log" >&2
    echo "$label failed (log: $log)" >&2
    exit 1
  fi
  echo "$label: done in $((SECONDS - start)) s (log: $log)"
}
