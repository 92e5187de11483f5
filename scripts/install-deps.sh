#!/usr/bin/env bash
# Installs every Debian 12 package DumpLens needs to build, test, benchmark, fuzz, take
# screenshots, and build and check its own .deb (dpkg-shlibdeps, validators, lintian, help2man for
# the man page, man-db for `man -l`). Idempotent and quiet: one line says what it installs; apt's
# own output goes to a log that is printed only when apt fails. Uses sudo when not root.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libgl1-mesa-dev libqcustomplot-dev
  nlohmann-json3-dev libsimdjson-dev libfast-float-dev libzstd-dev libxxhash-dev libtbb-dev libfmt-dev libcli11-dev libqpdf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format clang-tidy libfuzzer-14-dev libclang-rt-14-dev
  python3 python3-numpy
  libopenmpi-dev openmpi-bin
  xvfb xauth imagemagick poppler-utils qpdf fonts-dejavu-core dbus-daemon
  file dpkg-dev desktop-file-utils appstream shared-mime-info librsvg2-bin
  help2man man-db groff-base bash-completion lintian
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: apt-get installing ${#missing[@]} Debian package(s) DumpLens needs to build, test and package: ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Use-Pty=0 "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "install-deps: apt-get failed (its last lines above)" >&2
  exit 1
fi
