#!/usr/bin/env bash
# Installs every Debian 12 package DumpLens needs to build, test, benchmark, fuzz, take
# screenshots, and build and check its own .deb (dpkg-shlibdeps, validators, icon renderer).
# Idempotent; uses sudo when not root.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libgl1-mesa-dev libqcustomplot-dev
  nlohmann-json3-dev libsimdjson-dev libfast-float-dev libzstd-dev libxxhash-dev libtbb-dev libfmt-dev libcli11-dev libqpdf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libfuzzer-14-dev libclang-rt-14-dev
  python3 python3-numpy
  libopenmpi-dev openmpi-bin
  xvfb xauth imagemagick poppler-utils qpdf fonts-dejavu-core
  file dpkg-dev desktop-file-utils appstream shared-mime-info librsvg2-bin
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
