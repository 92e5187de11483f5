#!/usr/bin/env bash
# Sets up DumpLens and opens the bundled demo dump (the Baichuan2-style fp16 NormHead overflow).
# Without a display it says so, prints the headless analysis and writes the PDF report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)"
BIN=build/dev/app
DEMO="${DUMPLENS_DEMO_DIR:-build/demo}"
[ -d "$DEMO/ms22_async_infnan" ] || "$BIN/dumplens-cli" demo "$DEMO"
RUN="$DEMO/ms22_async_infnan"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$BIN/dumplens" ]; then
  exec "$BIN/dumplens" "$RUN"
fi
echo "No display found (DISPLAY/WAYLAND_DISPLAY unset): running the headless analysis instead."
echo
"$BIN/dumplens-cli" analyze "$RUN"
if "$BIN/dumplens-cli" report --help >/dev/null 2>&1; then
  "$BIN/dumplens-cli" report "$RUN" -o dumplens-report.pdf && echo "PDF report written to $(pwd)/dumplens-report.pdf"
fi
