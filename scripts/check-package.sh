#!/usr/bin/env bash
# Builds the Debian package from an already built folder (default build/ci) and checks it without
# installing it: unpacks it, validates the desktop entry, AppStream metainfo and MIME type, and runs
# the packaged programs (dumplens-cli --version, demo + analyze; dumplens --version offscreen).
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

bin="$tmp/root/usr/bin"
if ldd "$bin/dumplens" "$bin/dumplens-cli" | grep 'not found'; then exit 1; fi
test "$("$bin/dumplens-cli" --version)" = "dumplens-cli $version"
test "$(QT_QPA_PLATFORM=offscreen "$bin/dumplens" --version)" = "dumplens $version"
export DUMPLENS_CACHE_DIR="$tmp/cache"
"$bin/dumplens-cli" demo "$tmp/demo" >/dev/null
"$bin/dumplens-cli" analyze "$tmp/demo/ms22_async_saturation" --json > "$tmp/analysis.json"
grep -Eq '"schema": ?"dumplens.analysis/1"' "$tmp/analysis.json"
grep -q 'SqrtGrad' "$tmp/analysis.json"
echo "== package $(basename "$deb") checked"
