#!/usr/bin/env bash
# The command line prints the same bytes: runs every case of cli_bytes/commands.txt with BINARY and compares
# its exit code, stdout, stderr and the files it writes with cli_bytes/expected/ (made by the baseline binary).
#
# usage: check_cli_bytes.sh BINARY [--update] [--dir DIR] [--only REGEX]
#   --update      write the expected files from BINARY instead of comparing (use the unchanged main's binary)
#   --dir DIR     the folder holding commands.txt, fixtures/ and expected/ (default: cli_bytes/ beside
#                 this script; or $QS_CLI_BYTES_DIR)
#   --only REGEX  run only the cases whose name matches
# Exit 0 when every case matches, 1 when one differs (each difference is shown), 2 on a usage error.
set -u

usage() { grep -E '^# (usage|  )' "${BASH_SOURCE[0]}" | sed 's/^# //' >&2; exit 2; }

bin="" update=0 only="" dir="${QS_CLI_BYTES_DIR:-$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/cli_bytes}"
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1 ;;
    --dir) [ $# -ge 2 ] || usage; dir="$2"; shift ;;
    --only) [ $# -ge 2 ] || usage; only="$2"; shift ;;
    -h|--help) usage ;;
    -*) echo "check_cli_bytes: unknown option $1" >&2; usage ;;
    *) [ -z "$bin" ] || usage; bin="$1" ;;
  esac
  shift
done
[ -n "$bin" ] || usage
bin=$(readlink -f "$bin")
[ -x "$bin" ] || { echo "check_cli_bytes: $bin is not an executable" >&2; exit 2; }
[ -f "$dir/commands.txt" ] || { echo "check_cli_bytes: no $dir/commands.txt" >&2; exit 2; }
expected="$dir/expected"
mkdir -p "$expected"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

# Outputs longer than this are recorded by size and hash only (keeps expected/ small).
inline_limit=8192

# describe LABEL FILE [inline]: the size and hash of FILE, then (with inline) its bytes when short, so
# that a difference in a message shows in the diff.
describe() {
  local size hash
  size=$(stat -c %s "$2")
  hash=$(sha256sum < "$2" | cut -d' ' -f1)
  echo "$1: $size bytes, sha256 $hash"
  if [ "${3:-}" = inline ] && [ "$size" -gt 0 ] && [ "$size" -le "$inline_limit" ]; then
    tr -d '\000' < "$2"
    [ "$(tail -c1 "$2" | od -An -c | tr -d ' ')" = '\n' ] || echo
  fi
}

# run_case NAME ARGS...: the record of one run, on stdout.
run_case() {
  local name="$1"; shift
  local scratch="$tmp/scratch"
  rm -rf "$scratch"; mkdir -p "$scratch"
  cp -r "$dir/fixtures" "$scratch/fixtures"
  (cd "$scratch" && timeout 120 "$bin" "$@" > "$tmp/stdout" 2> "$tmp/stderr" < /dev/null)
  local rc=$?
  # The only time-dependent fields (sweep's total): masked.
  sed -i -E 's/"(seconds|gb_per_s)": [-+0-9.eE]+/"\1": <time>/g' "$tmp/stdout"
  echo "\$ quantscope $*"
  echo "exit: $rc"
  describe stdout "$tmp/stdout" inline
  describe stderr "$tmp/stderr" inline
  (cd "$scratch" && find . -path ./fixtures -prune -o -type f -print | sed 's|^\./||' | sort) |
    while IFS= read -r file; do describe "file $file" "$scratch/$file"; done
}

total=0 failed=0 names=""
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  eval "set -- $line"
  name="$1"; shift
  names="$names $name"
  [ -z "$only" ] || [[ "$name" =~ $only ]] || continue
  total=$((total + 1))
  run_case "$name" "$@" > "$tmp/actual"
  if [ $update -eq 1 ]; then
    cp "$tmp/actual" "$expected/$name"
  elif [ ! -f "$expected/$name" ]; then
    echo "MISSING $name: no expected/$name (run with --update on the baseline binary)"
    failed=$((failed + 1))
  elif ! cmp -s "$tmp/actual" "$expected/$name"; then
    echo "DIFFERS $name:"
    diff -u "$expected/$name" "$tmp/actual" | head -40
    failed=$((failed + 1))
  fi
done < "$dir/commands.txt"

# An expected file whose case is gone is stale: removed on --update, a failure otherwise.
if [ -z "$only" ]; then
  for file in "$expected"/*; do
    [ -e "$file" ] || continue
    base=$(basename "$file")
    case " $names " in *" $base "*) continue ;; esac
    if [ $update -eq 1 ]; then rm -f "$file"; else echo "STALE expected/$base (no such case)"; failed=$((failed + 1)); fi
  done
fi

if [ $update -eq 1 ]; then
  echo "check_cli_bytes: wrote $total expected records to $expected"
  exit 0
fi
echo "check_cli_bytes: $total cases, $failed differ"
[ $failed -eq 0 ]
