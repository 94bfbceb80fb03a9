#!/usr/bin/env bash
# Measures the CI perf gate's false-alarm rate and power on this machine's GPU (docs/ci-gate.md):
# N unchanged runs of the CI suite and of the default command, each its own process, with the gate's settings
# (A/A), and one run of each with every strategy slowed by 2, 3, 5 and 10% through the test hook
# ATTNBENCH_INJECT_SLOWDOWN (interleaved with the A/A runs). Then scripts/gate_study.py compares every A/A pair
# and every (A/A run, slowed run) pair with `attnbench compare` at its default threshold and writes the tables
# to OUTDIR/gate-study.md.
#   scripts/gate-study.sh OUTDIR [N=10]
#   Environment: ATTNBENCH (default build/attnbench), GATE_FLAGS (default: scripts/ci-perf.sh's), LEVELS ("2 3 5 10").
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gate-study.sh OUTDIR [N]}
n=${2:-10}
bin=${ATTNBENCH:-build/attnbench}
# shellcheck source=scripts/gate-settings.sh
source scripts/gate-settings.sh
flags=$ATTNBENCH_GATE_FLAGS
mkdir -p "$out"
: >"$out/walls.txt"
run() {  # run NAME ARGS...: one process, its wall time recorded
  local name=$1; shift
  local t0=$(date +%s%N)
  # shellcheck disable=SC2086
  "$bin" "$@" $flags --verify --quiet --no_table --json="$out/$name.json" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a "$out/walls.txt"
}
levels=(${LEVELS:-2 3 5 10})
for i in $(seq 1 "$n"); do
  run "ci-aa-$i" --config=ci
  run "default-aa-$i" --batch=32 --heads=12 --seq_len=512
  # The slowed runs sit between the A/A runs, so drift over the study touches both alike.
  k=$(( i - 1 ))
  if (( k < ${#levels[@]} )); then
    ATTNBENCH_INJECT_SLOWDOWN="${levels[$k]}%" run "ci-slow-${levels[$k]}" --config=ci
    ATTNBENCH_INJECT_SLOWDOWN="${levels[$k]}%" run "default-slow-${levels[$k]}" --batch=32 --heads=12 --seq_len=512
  fi
done
python3 scripts/gate_study.py "$out" --attnbench "$bin" | tee "$out/gate-study.md"
