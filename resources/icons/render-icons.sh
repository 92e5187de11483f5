#!/usr/bin/env bash
# Regenerates the committed PNG icons from dumplens.svg at the hicolor theme sizes.
# Needs rsvg-convert (Debian package librsvg2-bin). Run after editing the SVG and commit the PNGs.
set -euo pipefail
cd "$(dirname "$0")"
for s in 16 24 32 48 64 128 256; do
  mkdir -p "hicolor/${s}x${s}/apps"
  rsvg-convert -w "$s" -h "$s" dumplens.svg -o "hicolor/${s}x${s}/apps/dumplens.png"
done
