#!/usr/bin/env bash
# The desktop app watching a folder while a "job" writes the demo dump ms22_async_infnan into it:
# how long from the last byte of the file that shows the first overflow to the desktop notification.
# The notification is the Notify call on a private session bus (seen by dbus-monitor, which stamps
# each message), sent to a real notification server (dunst) under Xvfb. The writer lands the setup
# files, then one iteration of every rank every `PACE` seconds, each file written and closed in one
# go, and stamps each file after its close (CLOCK_REALTIME, as dbus-monitor's stamps).
# Usage: bench/app_watch_latency.sh [BUILD_DIR] [RUNS] [PACE]   (docs/PERFORMANCE.md, "Watch")
set -euo pipefail
B=$(realpath "${1:-build/ci}")
RUNS=${2:-5}
PACE=${3:-1}
W=$(mktemp -d /tmp/dl_applat.XXXXXX)
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    [ -n "${BUS_PID:-}" ] && kill "$BUS_PID" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
"$B/app/dumplens-cli" demo "$W/demo" >/dev/null
S=$W/demo/ms22_async_infnan
eval "$(dbus-daemon --session --fork --print-address=1 --print-pid=1 | {
    read -r a
    read -r p
    echo "export DBUS_SESSION_BUS_ADDRESS='$a'; BUS_PID=$p"
})"

for run in $(seq 1 "$RUNS"); do
    D=$W/job$run/dump
    rm -f "$W/mon.txt" "$W/landed.txt"
    xvfb-run -a -s '-screen 0 1366x768x24' bash -c "
        dunst >/dev/null 2>&1 &
        sleep 1
        dbus-monitor --session \"interface='org.freedesktop.Notifications',member='Notify'\" >'$W/mon.txt' 2>/dev/null &
        QT_QPA_PLATFORM=xcb '$B/app/dumplens' --watch '$D' >/dev/null 2>&1 &
        APP=\$!
        sleep 3
        python3 - '$S' '$D' '$PACE' >'$W/landed.txt' <<'PY'
import os, sys, time
src, dst, pace = sys.argv[1], sys.argv[2], float(sys.argv[3])
def land(rel):
    data = open(os.path.join(src, rel), 'rb').read()
    os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
    with open(os.path.join(dst, rel), 'wb') as f:
        f.write(data)
    print('%.6f %s' % (time.time(), rel), flush=True)
files = sorted(os.path.relpath(os.path.join(r, n), src) for r, _, ns in os.walk(src) for n in ns)
iters = lambda rel: rel.split('/')[3] if rel.count('/') >= 4 and rel.split('/')[3].isdigit() else None
for rel in files:
    if iters(rel) is None:
        land(rel)
for it in sorted({int(iters(r)) for r in files if iters(r) is not None}):
    time.sleep(pace)
    for rel in files:
        if iters(rel) == str(it):
            land(rel)
time.sleep(3)
PY
        kill \$APP 2>/dev/null; wait \$APP 2>/dev/null || true
    " || true
    python3 - "$W/mon.txt" "$W/landed.txt" <<'PY'
import re, sys
mon, landed = open(sys.argv[1]).read(), [l.split(' ', 1) for l in open(sys.argv[2]).read().splitlines()]
calls = re.findall(r'method call time=([0-9.]+).*?member=Notify(.*?)(?=\nmethod|\Z)', mon, re.S)
if not calls:
    print('no notification'); sys.exit(0)
t, body = float(calls[0][0]), calls[0][1]
# The body names the op: its file (the op name and the tensor) landed last among those it can be.
m = re.search(r'([A-Za-z0-9_]+)\s+(\S+)\s+on rank (\d+), iteration (\d+), (input|output)\.(\d+)', body)
op, rank, it, io, slot = m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)
hits = [float(s) for s, rel in landed
        if rel.startswith('rank_%s/' % rank) and '/%s/' % it in rel and op in rel and '.%s.%s.' % (io, slot) in rel]
print('notify %.3f s after the last byte of %s (rank %s, iteration %s)' % (t - max(hits), op, rank, it))
PY
done
