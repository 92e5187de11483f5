#!/usr/bin/env bash
# Builds DumpLens with warnings as errors and runs every test (GUI tests offscreen).
# Long benchmarks-as-tests carry the ctest label "long" and are skipped here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)"
