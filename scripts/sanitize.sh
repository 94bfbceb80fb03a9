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
# cli_concurrent_tune's race (six tunes merging into one cache) is tried 3 times in the plain run (scripts/test.sh);
# here once is enough to run that path under the sanitizers (3 trials took 95 s of this suite's ~300).
export ATTNBENCH_TEST_TRIALS=${ATTNBENCH_TEST_TRIALS:-1}
ctest --test-dir "${SANITIZE_BUILD_DIR:-build-sanitize}" -L cpu -LE nosanitize --output-on-failure -j "$(nproc)" "$@"
