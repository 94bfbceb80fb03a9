#!/usr/bin/env bash
# Runs the cpu-labelled tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitized-build.sh); any report, leaks included, fails the test it happens in.
# Usage: scripts/sanitize.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitized-build.sh
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Excluded by name: cli_report_scripts runs the CI perf gate end to end and expects CPU timings to show a
# deliberate 2x slowdown; under the sanitizers the noise hides it and the test takes over 7 minutes. Its
# code paths (compare, report, the printers) run sanitized in test_compare, test_compare_cli and
# test_report_printers.
ctest --test-dir "${SANITIZE_BUILD_DIR:-build-sanitize}" -L cpu -E '^cli_report_scripts$' --output-on-failure -j "$(nproc)" "$@"
