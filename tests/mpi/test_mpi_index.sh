#!/usr/bin/env bash
# Distributed indexing end to end: `mpirun -np 4 dumplens-cli index --mpi` over the demo dump must
# equal the single-process index; `merge` of per-rank shards must equal it too; a process that is
# killed, or that sees an empty folder, must not sink the job and its folders are reported missing.
# Usage: test_mpi_index.sh CLI MPIEXEC
set -euo pipefail
CLI="$1"; MPIEXEC="$2"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$CLI" demo "$W/demo" >/dev/null
RUN="$W/demo/ms22_async_saturation"
summary() { "$CLI" analyze "$1" --no-cache --json | python3 -c '
import json,sys; a=json.load(sys.stdin); f=a["first_overflow"]
print(f["rank"], f["iteration"], f["op_name"], f["kind"], len(a["chain"]))'; }
counts() { "$CLI" index "$1" --no-cache --json | python3 -c '
import json,sys; a=json.load(sys.stdin); print(a["ops"], a["tensors"], a["bytes"], len(a["ranks"]))'; }
fail() { echo "FAIL: $*"; exit 1; }

"$CLI" index "$RUN" --no-cache -o "$W/direct.dlx" >/dev/null
"$MPIEXEC" -np 4 "$CLI" index "$RUN" --no-cache --mpi -o "$W/mpi.dlx" > "$W/mpi.log"
[ "$(counts "$W/mpi.dlx")" = "$(counts "$W/direct.dlx")" ] || fail "mpi index counts differ"
[ "$(summary "$W/mpi.dlx")" = "$(summary "$RUN")" ] || fail "mpi first overflow differs"
"$CLI" index "$W/mpi.dlx" --json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["cache"]["files_read"] == 0'
echo "ok: mpirun -np 4 equals the single-process index"

for r in 0 1 2 3; do "$CLI" index "$RUN/rank_$r" --no-cache -o "$W/shard$r.dlx" >/dev/null; done
"$CLI" merge "$W"/shard{0,1,2,3}.dlx -o "$W/merged.dlx" >/dev/null
[ "$(counts "$W/merged.dlx")" = "$(counts "$W/direct.dlx")" ] || fail "merged shard counts differ"
echo "ok: merge of per-rank shards equals the direct index"

# Local disks: process p sees only rank_p; process 2 is pointed at an empty folder.
for p in 0 1 3; do mkdir -p "$W/node$p"; cp -r "$RUN/rank_$p" "$W/node$p/"; done
mkdir -p "$W/node2"
cat > "$W/launch.sh" <<EOS
#!/bin/sh
exec "$CLI" index "$W/node\${OMPI_COMM_WORLD_RANK}" --no-cache --mpi --mpi-timeout 60 -o "$W/partial.dlx"
EOS
chmod +x "$W/launch.sh"
"$MPIEXEC" -np 4 "$W/launch.sh" > "$W/empty.log" 2>&1 || true
[ -f "$W/partial.dlx" ] || { cat "$W/empty.log"; fail "no index written when a process saw an empty folder"; }
[ "$(counts "$W/partial.dlx" | cut -d' ' -f4)" = 3 ] || fail "expected the 3 visible ranks"
echo "ok: a process with an empty folder does not sink the job"

# A process killed after it listed its folders: process 0 waits out the timeout and reports them.
cp -r "$RUN/rank_2" "$W/node2/"
rm -f "$W/partial.dlx"
# Process 0 waits the whole timeout for the dead one, so it is short: the live processes' shards
# arrive within ~0.3 s of the start (the whole empty-folder job above takes ~0.6 s), 4 s is >10x that.
sed -i 's/--mpi-timeout 60/--mpi-timeout 4/' "$W/launch.sh"
# Open MPI ends the whole job when a process dies unless told not to (Slurm: srun --no-kill).
DUMPLENS_TEST_MPI_KILL_RANK=2 timeout 120 "$MPIEXEC" --mca orte_abort_on_non_zero_status 0 -x DUMPLENS_TEST_MPI_KILL_RANK -np 4 "$W/launch.sh" > "$W/kill.log" 2>&1 || true
[ -f "$W/partial.dlx" ] || { cat "$W/kill.log"; fail "no index written when a process was killed"; }
grep -q "Missing: rank_2" "$W/kill.log" || { cat "$W/kill.log"; fail "killed process's folder not reported"; }
"$CLI" index "$W/partial.dlx" --json | python3 -c '
import json,sys; d=json.load(sys.stdin)
assert len(d["ranks"]) == 3, d["ranks"]
assert any("rank_2" in w["path"] and "missing" in w["reason"] for w in d["warnings"]), d["warnings"]'
echo "ok: a killed process is reported missing and the rest is indexed"
