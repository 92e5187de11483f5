#!/usr/bin/env bash
# Builds the Debian package from an already built folder (default build/ci) and checks it without
# installing it: lintian (any error or warning fails), then unpacked: the desktop entry, AppStream
# metainfo and MIME type, the man pages (man -l, against the packaged programs' --help), the bash
# completion (sourced: complete -p dumplens-cli), and the packaged programs themselves
# (dumplens-cli --version, demo + analyze; dumplens --version offscreen).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
rm -f "$build"/dumplens_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/dumplens_"$version"_*.deb)
echo "== $deb"
dpkg-deb --field "$deb" Package Version Architecture Depends Recommends
dpkg-deb --field "$deb" Depends | grep -q 'libqt6widgets6' || { echo "Depends lacks the Qt libraries"; exit 1; }
dpkg-deb --field "$deb" Depends | grep -q 'libqpdf29' || { echo "Depends lacks libqpdf (the report's PDF outline)"; exit 1; }

# Debian's own checker: an error or a warning fails, info tags do not (the hardening ones, bindnow
# and fortify, are left to the build flags). CI runs as root: lintian's note about that is dropped.
lintian --fail-on error,warning --tag-display-limit 0 "$deb" 2> >(grep -v 'running with root privileges' >&2)
echo "== lintian: no error or warning"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/root"
share="$tmp/root/usr/share"
desktop-file-validate "$share/applications/dumplens.desktop"
appstreamcli validate --no-net "$share/metainfo/org.dumplens.DumpLens.metainfo.xml"
grep -q "<release version=\"$version\"" "$share/metainfo/org.dumplens.DumpLens.metainfo.xml"
mkdir -p "$tmp/mime/packages"
cp "$share/mime/packages/dumplens.xml" "$tmp/mime/packages/"
update-mime-database "$tmp/mime" 2>/dev/null
grep -q '^application/x-dumplens-index:\*\.dlx$' <(cut -d: -f2- "$tmp/mime/globs2")
for s in 16 24 32 48 64 128 256; do test -s "$share/icons/hicolor/${s}x${s}/apps/dumplens.png"; done
test -s "$share/icons/hicolor/scalable/apps/dumplens.svg"

doc="$share/doc/dumplens"
test -s "$doc/copyright" && test -s "$doc/changelog.gz" && test -s "$doc/README.md" && test -s "$doc/cli.md"
bin="$tmp/root/usr/bin"
# The man pages render without a warning and hold every command and option of the packaged programs'
# --help; the completion, sourced, is registered and completes them (scripts/cli-reference.py).
for page in dumplens dumplens-cli; do
  man --warnings -l "$share/man/man1/$page.1.gz" 2>"$tmp/man.err" | grep -q "^NAME"
  if [ -s "$tmp/man.err" ]; then cat "$tmp/man.err"; exit 1; fi
done
python3 scripts/cli-reference.py man "$bin/dumplens-cli" "$share/man/man1/dumplens-cli.1.gz" \
    "$bin/dumplens" "$share/man/man1/dumplens.1.gz"
completion="$share/bash-completion/completions/dumplens-cli"
bash -c 'source "$1" && complete -p dumplens-cli' _ "$completion" | grep -q -- '-F _dumplens_cli dumplens-cli$'
python3 scripts/cli-reference.py completion "$bin/dumplens-cli" "$completion"
echo "== man pages and bash completion checked"

if ldd "$bin/dumplens" "$bin/dumplens-cli" | grep 'not found'; then exit 1; fi
test "$("$bin/dumplens-cli" --version)" = "dumplens-cli $version"
test "$(QT_QPA_PLATFORM=offscreen "$bin/dumplens" --version)" = "dumplens $version"
export DUMPLENS_CACHE_DIR="$tmp/cache"
"$bin/dumplens-cli" demo "$tmp/demo" >/dev/null
"$bin/dumplens-cli" analyze "$tmp/demo/ms22_async_saturation" --json > "$tmp/analysis.json"
grep -Eq '"schema": ?"dumplens.analysis/1"' "$tmp/analysis.json"
grep -q 'SqrtGrad' "$tmp/analysis.json"
echo "== package $(basename "$deb") checked"
