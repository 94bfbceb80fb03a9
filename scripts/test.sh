#!/usr/bin/env bash
# Quick start, step 2: build if needed and run every test. GPU tests (label gpu) report as skipped
# ("Not Run") on machines without a CUDA device. Arguments go to ctest (e.g. -L cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
