#!/usr/bin/env bash
# Measures the CI perf gate's false-alarm rate and power on this machine's GPU (docs/ci-gate.md):
# N unchanged runs of the CI suite and of the default command, each its own process, with the gate's settings
# (A/A), and one run of each with every strategy slowed by 2, 3, 5 and 10% through the test hook
# ATTNBENCH_INJECT_SLOWDOWN (interleaved with the A/A runs). Then scripts/gate_study.py compares every A/A pair
# and every (A/A run, slowed run) pair with `attnbench compare` at its default threshold and writes the tables
# to OUTDIR/gate-study.md.
#   scripts/gate-study.sh OUTDIR [N=10]
#   Environment: ATTNBENCH (default build/attnbench), GATE_FLAGS (default: scripts/gate-settings.sh's),
#   LEVELS ("2 3 5 10"), COMMANDS ("ci default": which commands to run; a study can be split over several
#   calls into one OUTDIR, and STUDY_ONLY=1 skips the runs and only makes the tables).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gate-study.sh OUTDIR [N]}
n=${2:-10}
bin=${ATTNBENCH:-build/attnbench}
# shellcheck source=scripts/gate-settings.sh
source scripts/gate-settings.sh
flags=$ATTNBENCH_GATE_FLAGS
mkdir -p "$out"
touch "$out/walls.txt"
run() {  # run NAME ARGS...: one process, its wall time recorded
  local name=$1; shift
  local t0=$(date +%s%N)
  # shellcheck disable=SC2086
  "$bin" "$@" $flags --verify --quiet --no_table --json="$out/$name.json" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a "$out/walls.txt"
}
levels=(${LEVELS:-2 3 5 10})
declare -A args=([ci]="--config=ci" [default]="--batch=32 --heads=12 --seq_len=512")
for i in $(seq 1 "$n"); do
  [[ "${STUDY_ONLY:-0}" == 1 ]] && break
  for c in ${COMMANDS:-ci default}; do
    # shellcheck disable=SC2086
    run "$c-aa-$i" ${args[$c]}
    # The slowed runs sit between the A/A runs, so drift over the study touches both alike.
    k=$(( i - 1 ))
    # shellcheck disable=SC2086
    (( k < ${#levels[@]} )) && ATTNBENCH_INJECT_SLOWDOWN="${levels[$k]}%" run "$c-slow-${levels[$k]}" ${args[$c]}
  done
done
python3 scripts/gate_study.py "$out" --attnbench "$bin" | tee "$out/gate-study.md"
