#!/usr/bin/env bash
# Quick start, step 1: install dependencies, build, and run the main job: the default problem
# (B=32 H=12 S=512 D=64, fp16) through every strategy with verification. On a machine without a GPU it
# runs on the CPU reference backend (CPU times, not GPU times) with a smaller shape, since the fp64
# reference backend needs minutes for the full one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
if ./build/attnbench list | grep -q 'cuda:'; then
  ./build/attnbench --batch=32 --heads=12 --seq_len=512 --verify --json=attnbench-report.json
else
  ./build/attnbench --batch=4 --heads=12 --seq_len=256 --pages=1,4 --verify --json=attnbench-report.json
fi
echo "report written to attnbench-report.json"
