#!/usr/bin/env bash
# Runs the cpu-labelled tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitized-build.sh); any report, leaks included, fails the test it happens in. Tests labelled
# nosanitize (tests/CMakeLists.txt says which and why) are left out.
# Usage: scripts/sanitize.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitized-build.sh
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir "${SANITIZE_BUILD_DIR:-build-sanitize}" -L cpu -LE nosanitize --output-on-failure -j "$(nproc)" "$@"
