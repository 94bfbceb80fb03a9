#!/usr/bin/env bash
# Installs attnbench's dependencies from Debian/Ubuntu packages (needs root or sudo), only those missing.
#   scripts/install-deps.sh               everything: the build's, the tests' and the tools' (scripts/test.sh)
#   scripts/install-deps.sh --build-only  only what building the attnbench binary needs (scripts/quickstart.sh)
# The CUDA Toolkit (nvcc, cuBLASLt, CUPTI, NVTX3 headers) is expected to be installed already; without it the
# build falls back to the CPU reference backend only. ATTNBENCH_NO_APT=1 installs nothing (the dependencies come
# another way, e.g. CMAKE_PREFIX_PATH=$PWD/build-deps from scripts/pack-build-deps.sh on a machine with no registry).
set -euo pipefail
# The build: CMake 3.24+, Ninja, a C++17 compiler, CLI11, nlohmann/json and fmt.
build_pkgs=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev)
# The tests and tools: GoogleTest (tests/cpu), pytest (tests/cli), jsonschema (scripts/check-schemas.py, the
# report_schema test); python3-*: the Python package (pyproject.toml; pip install --no-build-isolation .);
# file and dpkg-dev: cpack -G DEB; slurm-wlm, munge: the `cluster` test (tests/cluster/) starts a one-node Slurm
# cluster. .ci/run installs the same list.
dev_pkgs=(libgtest-dev python3 python3-pytest python3-jsonschema python3-pandas python3-matplotlib python3-setuptools
          python3-pip python3-venv file dpkg-dev slurm-wlm munge)
pkgs=("${build_pkgs[@]}")
case "${1:-}" in
  --build-only) ;;
  "") pkgs+=("${dev_pkgs[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build-only]" >&2; exit 2 ;;
esac
[[ -n "${ATTNBENCH_NO_APT:-}" ]] && exit 0
if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-deps.sh: no dpkg and apt-get here; install these (or their equivalents) yourself: ${pkgs[*]}" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  echo "installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
