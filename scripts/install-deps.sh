#!/usr/bin/env bash
# Installs attnbench's build dependencies from Debian/Ubuntu packages (needs root or sudo). The CUDA
# Toolkit (nvcc, cuBLASLt, CUPTI, NVTX3 headers) is expected to be installed already; without it the
# build falls back to the CPU reference backend only.
set -euo pipefail
# python3-*: the Python package (pyproject.toml; pip install --no-build-isolation .); file and dpkg-dev: cpack -G DEB.
pkgs=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3
      python3-pandas python3-matplotlib python3-setuptools python3-pip python3-venv file dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
