#!/usr/bin/env bash
# Checks that every C++ file in the repository is formatted as .clang-format says (clang-format-19,
# installed by scripts/setup.sh --format). Lists the files that differ and fails; CI runs it.
#   scripts/check_format.sh         check
#   scripts/check_format.sh --fix   rewrite the files that differ
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: scripts/check_format.sh [--fix]" >&2; exit 2 ;;
esac
scripts/setup.sh --format
mapfile -t files < <(git ls-files '*.cc' '*.h')
if ((fix)); then
  clang-format-19 -i "${files[@]}"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  clang-format-19 --dry-run --Werror "$f" 2>/dev/null || unformatted+=("$f")
done
if ((${#unformatted[@]})); then
  echo "check_format: ${#unformatted[@]} file(s) differ from .clang-format (scripts/check_format.sh --fix):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
