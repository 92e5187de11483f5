#!/usr/bin/env bash
# Generator of the real msprobe corpus (issues #25 item 4, #26). Run by hand, never in CI:
#   tests/data/real/msprobe/make.sh [VENV_ROOT]
# Needs Debian's python3-torch (torch 1.13; PyPI's CPU index is not reachable from the build machines)
# and PyPI's mindstudio-probe wheels 8.3.3 and 26.2.0, each in its own venv outside the repo.
# 8.3.x writes step0/rank/, 26.x step0/proc{pid}/; both are copied flat into the variant folder.
# Writes dumps/<version>/<mode>_<level>/<variant>/ and msprobe's own compare tables in
# tables/<version>/<mode>_<level>/<pair>/, the expected answers of tests/core/compare/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENVS=${1:-$HOME/.cache/dumplens-msprobe-venvs}
VERSIONS=${VERSIONS:-"8.3.3 26.2.0"}
MODES=${MODES:-"statistics:L1 statistics:mix tensor:L1 md5:L1"}
for v in $VERSIONS; do
  venv="$VENVS/msprobe-${v%%.*}"
  if [ ! -x "$venv/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q "mindstudio-probe==$v" "numpy<2"   # Debian's torch is built against numpy 1.x
  fi
  for ml in $MODES; do
    mode=${ml%%:*}; level=${ml##*:}
    task=$mode; summary=statistics
    [ "$mode" = md5 ] && { task=statistics; summary=md5; }
    for variant in fp16_overflow fp32_fix softmax_bad softmax_good; do
      out="$HERE/dumps/$v/${mode}_$level/$variant"; rm -rf "$out"; mkdir -p "$out"
      work=$(mktemp -d)
      cat > "$work/config.json" <<CFG
{"task": "$task", "dump_path": "$work/out", "rank": [], "step": [], "level": "$level", "async_dump": false,
 "tensor": {"scope": [], "list": [], "data_mode": ["all"], "file_format": "npy"},
 "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "$summary"}}
CFG
      (cd "$work" && "$venv/bin/python" "$HERE/model.py" "$variant" "$work/config.json" > "$work/log.txt" 2>&1) || \
        { echo "msprobe $v $mode $level $variant failed:"; tail -3 "$work/log.txt"; }
      cp -r "$work"/out/step0/*/. "$out/" 2>/dev/null || true
      rm -rf "$work"
    done
    for pair in fp16_overflow:fp32_fix softmax_bad:softmax_good; do
      npu=${pair%%:*}; bench=${pair##*:}
      d="$HERE/dumps/$v/${mode}_$level"
      t="$HERE/tables/$v/${mode}_$level/$npu-vs-$bench"; rm -rf "$t"; mkdir -p "$t"
      cat > "$t/compare.json" <<CMP
{"npu_path": "$d/$npu/dump.json", "bench_path": "$d/$bench/dump.json", "stack_path": "$d/$npu/stack.json", "is_print_compare_log": false}
CMP
      (cd "$t" && "$venv/bin/msprobe" -f pytorch compare -i "$t/compare.json" -o "$t" -s > "$t/compare.log" 2>&1) || \
      (cd "$t" && "$venv/bin/msprobe" compare -tp "$d/$npu/dump.json" -gp "$d/$bench/dump.json" -o "$t" > "$t/compare.log" 2>&1) || true
      # 8.3.x writes .xlsx only; a .csv beside it lets the C++ tests read the expected answer without a spreadsheet reader.
      for x in "$t"/*.xlsx; do [ -e "$x" ] && "$venv/bin/python" -c "import pandas,sys; pandas.read_excel(sys.argv[1], keep_default_na=False, dtype=str).to_csv(sys.argv[1][:-5]+'.csv', index=False)" "$x"; done
      # Keep paths repo-relative so the committed file points at nothing outside the repo.
      sed -i "s#$HERE/##g" "$t/compare.json"
    done
  done
done
# Stack frames and logs name this machine's venv and checkout; rewrite them to neutral prefixes in every
# text file (dumps and tables alike, so they still agree), and drop the .xlsx whose .csv copy is kept.
find "$HERE/dumps" "$HERE/tables" -type f \( -name '*.json' -o -name '*.csv' -o -name '*.txt' -o -name '*.log' \) -print0 |
  xargs -0 sed -i -e "s#$VENVS/msprobe-[0-9]*/lib/python3[.0-9]*/site-packages/#<site-packages>/#g" \
                  -e "s#$HERE/#<corpus>/#g" -e "s#/usr/lib/python3/dist-packages/#<dist-packages>/#g"
find "$HERE/tables" -name '*.xlsx' -delete
