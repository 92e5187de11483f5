#!/usr/bin/env bash
# Reproduces docs/screenshots/*.png: opens the bundled demo dump (ms22_async_saturation) in the
# desktop app under Xvfb; the app saves one PNG per view (--screenshots), and the whole screen is
# captured with ImageMagick's `import`. Needs: xvfb (xvfb-run), imagemagick, a build with the UI.
#   scripts/screenshots.sh [BUILD_DIR]   (default build/gui)
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
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c '
  "$1" --demo --screenshots "$2" & pid=$!
  # Wait for the per-view shots, then grab the whole screen while the window is still up.
  for _ in $(seq 1 600); do [ -f "$2/chain_view.png" ] && break; sleep 1; done
  sleep 1
  import -window root "$2/screen.png" || true
  wait $pid
' _ "$app" "$out"
ls -l "$out"
