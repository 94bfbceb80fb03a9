#!/usr/bin/env bash
# Configures and builds the sanitized CPU-only tree that scripts/sanitize.sh and scripts/fuzz.sh share
# (one build, both uses): clang with AddressSanitizer, UndefinedBehaviorSanitizer (no recovery) and
# libFuzzer's coverage instrumentation, tests and fuzz targets on; built from scratch, so each target's files as
# one unity file (batch size 0), with precompiled headers (cmake/build_speed.cmake). Arguments are ninja targets
# (none: all).
# The directory is $SANITIZE_BUILD_DIR (default build-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SANITIZE_BUILD_DIR:-build-sanitize}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# The build type's own flags come after CMAKE_CXX_FLAGS, so they are set here: -O2 (the level this tree has
# always been timed at: -O1 made the sanitized suite slower and its timing tests flakier) and no -DNDEBUG, so
# that assert() checks run under the sanitizers (RelWithDebInfo's default turned them off). -gline-tables-only:
# the file and line of every frame of a sanitizer's report, without the full debug info (which costs compile time).
CC=clang CXX=clang++ cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNBENCH_CUDA=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only" \
  -DATTNBENCH_FUZZ=ON -DBUILD_TESTING=ON -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DATTNBENCH_PCH=ON \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
ninja -C "$build" "$@" >/dev/null
