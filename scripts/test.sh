#!/usr/bin/env bash
# Quick start, step 2: install the tests' dependencies (scripts/install-deps.sh: GoogleTest, pytest, jsonschema,
# the Python package's, Slurm), build everything and run every test. GPU tests (label gpu) report as skipped
# ("Not Run") on machines without a CUDA device. Arguments go to ctest (e.g. -L cpu). ATTNBENCH_NO_APT=1 installs
# nothing; a failed install is said and the tests run with what is there (a missing tool skips its tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || echo "test.sh: scripts/install-deps.sh failed; tests whose tools are missing are skipped" >&2
# The in-process peers' headers from PyPI (docs/peers.md); without them the peers are not built and their tests skip.
scripts/fetch-peers.sh || echo "test.sh: scripts/fetch-peers.sh failed; the peers are not built" >&2
# The full build, whatever scripts/quickstart.sh left in build/'s CMake cache: the tests and the development
# harness on, and the CUDA backend wherever nvcc is found (-U: CMakeLists.txt's default again).
# ATTNBENCH_TEST_CMAKE_ARGS: more CMake arguments (.ci/run: -DATTNBENCH_CPU_TEST_PROGRAMS=OFF).
# shellcheck disable=SC2086  # a space-separated list
scripts/build.sh -DBUILD_TESTING=ON -DATTNBENCH_FUSED_DEV=ON -DATTNBENCH_FUSED_CAPI=ON -DATTNBENCH_ALL_TILES=ON -UATTNBENCH_CUDA \
  ${ATTNBENCH_TEST_CMAKE_ARGS:-}
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
