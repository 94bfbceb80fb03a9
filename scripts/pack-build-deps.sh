#!/usr/bin/env bash
# Packs this machine's CLI11, nlohmann/json, fmt and GoogleTest (headers, libfmt, CMake package files) into a
# relocatable prefix, build-deps/ by default, for a GPU machine whose image lacks them and cannot reach
# a package registry. Carry the folder with the device call and configure with
# -DCMAKE_PREFIX_PATH=$PWD/build-deps (scripts/gpu-check.sh does that when the folder exists).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build-deps}
rm -rf "$dest"
mkdir -p "$dest"
for pkg in libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 libgtest-dev; do
  dpkg -L "$pkg" | while read -r f; do
    case "$f" in
      /usr/include/*|/usr/lib/*|/usr/share/cmake/*) ;;
      *) continue ;;
    esac
    [[ -f "$f" || -L "$f" ]] || continue
    rel=${f#/usr/}
    mkdir -p "$dest/$(dirname "$rel")"
    cp -a "$f" "$dest/$rel"
  done
done
du -sh "$dest"
