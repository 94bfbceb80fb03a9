#!/usr/bin/env bash
# Configures and builds attnbench into build/ (CUDA on when nvcc is found). Extra arguments go to CMake,
# e.g. scripts/build.sh -DATTNBENCH_CUDA=OFF or -DCMAKE_CUDA_ARCHITECTURES=90a. CMake keeps every -D in
# build/CMakeCache.txt, so a value given once holds for later builds of the folder until given again
# (scripts/test.sh gives the full build's). BUILD_TARGETS (default: all) names the targets to build,
# e.g. BUILD_TARGETS=attnbench (scripts/quickstart.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
launcher=()
if command -v ccache >/dev/null; then  # rebuilds after small edits take seconds where ccache is installed
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# ATTNBENCH_FAST_BUILD=1 (.ci/run, scripts/quickstart.sh): a one-off build from scratch, each target's C++ files
# as one unity file (batch size 0: 20-30% less compile work than batches of 8), with precompiled headers
# (cmake/build_speed.cmake); slower to rebuild after an edit, so not the default. ATTNBENCH_FAST_BUILD=0 turns
# both off again in a folder where they were on; unset leaves the folder's setting.
fast=()
case "${ATTNBENCH_FAST_BUILD:-}" in
  "") ;;
  0) fast=(-DCMAKE_UNITY_BUILD=OFF -DATTNBENCH_PCH=OFF) ;;
  *) fast=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DATTNBENCH_PCH=ON) ;;
esac
cmake -G Ninja -S . -B "${BUILD_DIR:-build}" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${fast[@]}" "$@" >/dev/null
# shellcheck disable=SC2086  # BUILD_TARGETS: a space-separated list
ninja -C "${BUILD_DIR:-build}" ${BUILD_TARGETS:-}
