#!/usr/bin/env bash
# Configures and builds the sanitized CPU-only tree that scripts/sanitize.sh and scripts/fuzz.sh share
# (one build, both uses): clang with AddressSanitizer, UndefinedBehaviorSanitizer (no recovery) and
# libFuzzer's coverage instrumentation, tests and fuzz targets on; built from scratch, so in unity batches with
# precompiled headers (cmake/build_speed.cmake). Arguments are ninja targets (none: all).
# The directory is $SANITIZE_BUILD_DIR (default build-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SANITIZE_BUILD_DIR:-build-sanitize}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
CC=clang CXX=clang++ cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNBENCH_CUDA=OFF \
  -DATTNBENCH_FUZZ=ON -DBUILD_TESTING=ON -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_UNITY_BUILD=ON -DATTNBENCH_PCH=ON \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
ninja -C "$build" "$@" >/dev/null
