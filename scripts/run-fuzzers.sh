#!/usr/bin/env bash
# Builds the libFuzzer targets (`fuzz` preset, clang) and runs each for N seconds (default 20)
# on its seed corpus under fuzz/corpus/<target>/. Exits non-zero on the first crash, leak or
# sanitizer report; the crashing input is kept in build/fuzz/artifacts/.
# Usage: scripts/run-fuzzers.sh [seconds] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
shift || true
jobs="${FUZZ_BUILD_JOBS:-2}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for f in fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j "$jobs" --target "${targets[@]}"

mkdir -p build/fuzz/artifacts
status=0
for t in "${targets[@]}"; do
  work="build/fuzz/corpus-work/$t"   # new inputs go here; the seed corpus stays as committed
  mkdir -p "$work"
  seeds="fuzz/corpus/$t"
  [ -d "$seeds" ] || seeds=""
  echo "== $t (${secs}s)"
  if ! "build/fuzz/fuzz/$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$t-" "$work" $seeds \
       > "build/fuzz/$t.log" 2>&1; then
    echo "!! $t failed; see build/fuzz/$t.log"
    tail -n 40 "build/fuzz/$t.log"
    status=1
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "build/fuzz/$t.log" || true
  fi
done
exit $status
