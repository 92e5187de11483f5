#!/usr/bin/env bash
# Reproduces docs/screenshots/*.png: opens the bundled demo dump (ms22_async_infnan) in the
# desktop app under Xvfb and compares it with its bf16 fix; the app saves one PNG per view and
# the whole windows (--screenshots, compare_*.png for the compare window). Needs: xvfb (xvfb-run), imagemagick, a build with the UI.
#   scripts/screenshots.sh [BUILD_DIR]   (default build/gui)
#   SIZE=1366x768 scripts/screenshots.sh   small-laptop screen under openbox (a window manager, so
#   the windows are sized and decorated as on a desktop); also writes compare_1366x768.png (the screen).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/gui}"
out="$root/docs/screenshots"
app="$build/app/dumplens"
[ -x "$app" ] || { echo "no $app: build the 'dumplens' target first" >&2; exit 1; }
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A private cache/config so the shot does not depend on (or touch) the user's settings.
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" DUMPLENS_CACHE_DIR="$tmp/index"
size="${SIZE:-1600x1000}"
xvfb-run -a -s "-screen 0 ${size}x24" bash -c '
  if [ "$3" = 1366x768 ] && command -v openbox >/dev/null; then openbox >/dev/null 2>&1 & sleep 1; fi
  "$1" --demo --compare-fix --screenshots "$2" & pid=$!
  # Wait for the per-view shots. A root-window capture (import -window root) here showed a stale
  # progress page under Xvfb, so the docs use the widget grabs only; pass SCREEN=1 to get it anyway.
  for _ in $(seq 1 600); do [ -f "$2/compare_tensor.png" ] && break; sleep 1; done
  if [ "${SCREEN:-0}" = 1 ]; then sleep 1; import -window root "$2/screen.png" || true; fi
  if [ "$3" = 1366x768 ]; then sleep 1; import -window root "$2/compare_1366x768.png" || true; fi
  wait $pid
' _ "$app" "$out" "$size"
ls -l "$out"
