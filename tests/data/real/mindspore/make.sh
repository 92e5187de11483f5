#!/usr/bin/env bash
# Regenerates the real MindSpore dumps under tests/data/real/mindspore/<version>/ .
# Run by hand, never in CI (it downloads MindSpore from PyPI; CI reads the committed dumps):
#     tests/data/real/mindspore/make.sh 2.10.0            # python3 must suit the wheel
#     PYTHON=python3.9 tests/data/real/mindspore/make.sh 2.0.0
# Venvs go to $MS_VENV_DIR (default ~/.cache/dumplens-ms-venvs), outside the repository.
set -euo pipefail
version=${1:?usage: make.sh <mindspore version>}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=${MS_VENV_DIR:-$HOME/.cache/dumplens-ms-venvs}/ms-$version
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
  # MindSpore 2.0 was built against NumPy 1.x and still uses Image.ANTIALIAS and protobuf 3.
  case $version in 2.0*|2.1*|2.2*) old_deps='numpy<1.24 pillow<10 protobuf<4' ;; *) old_deps='' ;; esac
  "$venv/bin/pip" install "mindspore==$version" $old_deps
fi
got=$("$venv/bin/python" -c 'import mindspore; print(mindspore.__version__)' 2>/dev/null | tail -n1)
[ "$got" = "$version" ] || { echo "make.sh: venv $venv has MindSpore '$got', not $version" >&2; exit 1; }

out=$here/$version
# MindSpore accepts only [A-Za-z0-9_/-] in the dump path, so no mktemp dots.
work=${TMPDIR:-/tmp}/dumplens_ms_$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"

# statistic_category exists from 2.3; listing every category (md5 aside) makes each
# statistic.csv column testable. Older versions write their fixed 20-column header.
major_minor=$(echo "$version" | cut -d. -f1-2)
if [ "$(printf '%s\n2.3\n' "$major_minor" | sort -V | head -n1)" = "2.3" ]; then
  categories='"statistic_category": ["max", "min", "avg", "count", "negative zero count", "positive zero count", "nan count", "negative inf count", "positive inf count", "zero count", "l2norm"],'
else
  categories=''
fi

dump() { # dump <net> <saved_data> <target dir name>
  local net=$1 saved=$2 name=$3
  local root=$work/$name
  mkdir -p "$root"
  cat > "$work/$name.json" <<JSON
{
  "common_dump_settings": {
    "dump_mode": 0,
    "path": "$root",
    "net_name": "$net",
    "iteration": "all",
    "saved_data": "$saved",
    $categories
    "input_output": 0,
    "kernels": [],
    "support_device": [0, 1, 2, 3, 4, 5, 6, 7]
  },
  "e2e_dump_settings": { "enable": true, "trans_flag": true }
}
JSON
  (cd "$work" && MINDSPORE_DUMP_CONFIG="$work/$name.json" GLOG_v=3 \
      "$venv/bin/python" "$here/nets.py" "$net" > "$work/$name.log" 2>&1) || {
    # Older CPU builds refuse saved_data statistic outright; say so beside the dumps.
    if [ "$saved" = statistic ] && grep -q "statistic dump is only supported on GPU and Ascend" "$work/$name.log"; then
      echo "$name: MindSpore $version refuses saved_data \"statistic\" on CPU:" >> "$out/NOT_WRITTEN.txt"
      grep -m1 "statistic dump is only supported" "$work/$name.log" >> "$out/NOT_WRITTEN.txt"
      return 0
    fi
    cat "$work/$name.log" >&2; echo "make.sh: $net ($saved) failed" >&2; exit 1; }
  cp -r "$root" "$out/$name"
  cp "$work/$name.log" "$out/$name/run.log"
}

dump forward_mul tensor forward_mul
dump train_sqrtgrad tensor train_sqrtgrad
dump train_sqrtgrad statistic train_sqrtgrad-statistic
dump train_fixed tensor train_fixed
dump multigraph tensor multigraph

# Expected answers computed by NumPy over the very files just copied.
"$venv/bin/python" "$here/expected.py" "$out"
{
  echo "Written by tests/data/real/mindspore/make.sh $version on $(date -u +%Y-%m-%d)"
  "$venv/bin/python" -c 'import sys, mindspore, numpy; print("mindspore", mindspore.__version__, "numpy", numpy.__version__, "python", sys.version.split()[0])'
  echo "networks: tests/data/real/mindspore/nets.py; expected.json: tests/data/real/mindspore/expected.py"
} > "$out/VERSION.txt"
du -sh "$out"/*
