#!/usr/bin/env bash
# Checks that every tracked C++ file is formatted by the repository's .clang-format (clang-format 14,
# Debian 12's). --fix rewrites the files that differ instead. Run from anywhere in the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
    clang-format -i "${files[@]}"
    exit 0
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/check-format.$$; then
    grep -o '^[^:]*:[0-9]*' /tmp/check-format.$$ | sort -u | head -20 >&2
    n=$(grep -c 'error:' /tmp/check-format.$$ || true)
    rm -f /tmp/check-format.$$
    echo "check-format: $n lines differ from .clang-format; run: bash scripts/check-format.sh --fix" >&2
    exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files match .clang-format"
