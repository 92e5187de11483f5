#!/usr/bin/env bash
# Builds DumpLens with warnings as errors and runs every test (GUI tests offscreen).
# The ctest labels: "mpi" (needs mpiexec; left out of the sanitizer runs, Open MPI leaks at exit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)"
