#!/usr/bin/env bash
# Builds the libFuzzer targets (`fuzz` preset, clang) and runs each for N seconds (default 20)
# on its seed corpus under fuzz/corpus/<target>/. Exits non-zero on any crash, leak or sanitizer
# report; the crashing input is kept in build/fuzz/artifacts/.
# Usage: scripts/run-fuzzers.sh [seconds] [target[:seconds]...]
#   no target: every target for `seconds`; `all` stands for every target not named otherwise, so
#   `run-fuzzers.sh 20 all fuzz_index_file:90` runs fuzz_index_file longer than the rest.
#   FUZZ_JOBS=N runs N targets at once (default 1; one core each).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
shift || true
jobs="${FUZZ_BUILD_JOBS:-2}"
parallel="${FUZZ_JOBS:-1}"
every=()
for f in fuzz/fuzz_*.cpp; do every+=("$(basename "$f" .cpp)"); done
[ $# -eq 0 ] && set -- all

declare -A seconds=()
order=()
add() { [ -n "${seconds[$1]+x}" ] || order+=("$1"); seconds[$1]="$2"; }
named=" $* "
for arg in "$@"; do
  if [ "$arg" = all ]; then
    for t in "${every[@]}"; do [[ "$named" == *" $t:"* || "$named" == *" $t "* ]] || add "$t" "$secs"; done
  else
    t="${arg%%:*}"
    [[ "$arg" == *:* ]] && add "$t" "${arg#*:}" || add "$t" "$secs"
  fi
done

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j "$jobs" --target "${order[@]}"

mkdir -p build/fuzz/artifacts
run() {   # target seconds: one fuzzing session, its log in build/fuzz/<target>.log
  local t="$1" s="$2" work="build/fuzz/corpus-work/$1" seeds="fuzz/corpus/$1"
  mkdir -p "$work"   # new inputs go here; the seed corpus stays as committed
  [ -d "$seeds" ] || seeds=""
  "build/fuzz/fuzz/$t" -max_total_time="$s" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$t-" "$work" $seeds > "build/fuzz/$t.log" 2>&1
}
report() {   # target status
  if [ "$2" -ne 0 ]; then
    echo "!! $1 failed; see build/fuzz/$1.log"
    tail -n 40 "build/fuzz/$1.log"
    status=1
  else
    echo "== $1 passed (${seconds[$1]}s)"
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|INITED cov" "build/fuzz/$1.log" | head -n 3 || true
  fi
}

status=0
declare -A pids=()
for t in "${order[@]}"; do
  echo "== $t (${seconds[$t]}s)"
  run "$t" "${seconds[$t]}" &
  pids[$!]="$t"
  while [ ${#pids[@]} -ge "$parallel" ]; do
    rc=0
    wait -n -p done_pid "${!pids[@]}" || rc=$?
    report "${pids[$done_pid]}" "$rc"
    unset "pids[$done_pid]"
  done
done
while [ ${#pids[@]} -gt 0 ]; do
  rc=0
  wait -n -p done_pid "${!pids[@]}" || rc=$?
  report "${pids[$done_pid]}" "$rc"
  unset "pids[$done_pid]"
done
exit $status
