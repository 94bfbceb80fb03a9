#!/usr/bin/env bash
# CI perf gate, for a GPU runner: run the CI suite, compare it with a committed baseline, fail on a regression.
#
#   scripts/ci-perf.sh [BASELINE.json] [OUTDIR]
#     BASELINE.json  committed baseline report (default: perf/baseline-$(GPU name).json, e.g.
#                    perf/baseline-NVIDIA_H200.json; one per GPU model, since compare refuses other devices)
#     OUTDIR         where new.json, compare.md, compare.csv and the log go (default: perf-out)
#
#   Environment: ATTNBENCH (binary; default build/attnbench, built with scripts/build.sh when missing),
#   SUITE (default ci: configs/ci.json; a name or a path), GATE_FLAGS (replaces the gate's measurement
#   settings in scripts/gate-settings.sh), THRESHOLD (default: compare's own, 3%), BACKEND (default cuda; cpu only to try the script), EXTRA_RUN_FLAGS (added to the run, e.g. "--max_time=2"), PEERS=1 (also time the
#   PyTorch SDPA peers into new.json; needs torch), UPDATE_BASELINE=1 (copy new.json over the baseline and
#   exit 0: run it on the main branch's runner, then commit the file).
#
#   Exit status: 0 no regression, 1 a row got slower beyond the threshold and the noise or its status got
#   worse (ok -> incorrect/failed/unsupported), 2 unusable input (no baseline, other schema, other GPU),
#   anything else: the run itself failed. `compare.md` is ready to post as a PR comment.
#
#   The run uses the gate's settings (scripts/gate-settings.sh: graph timer, 20 rounds on fresh memory
#   placements). With them, on an H200, 10 unchanged runs compared pairwise gave no slower or faster row and
#   a 5% slowdown was caught in every pair (docs/ci-gate.md has the tables; scripts/gate-study.sh measures
#   them again on your GPU). Keep the GPU to this job and regenerate the baseline whenever the driver, CUDA or
#   the runner's GPU changes. attnbench never changes clocks; it records the SM clock it saw, marks rows that
#   ran below 80% of the maximum, and compare warns when the two runs' clocks differ.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${ATTNBENCH:-build/attnbench}
# shellcheck source=scripts/gate-settings.sh
source scripts/gate-settings.sh
threshold=()
[[ -n "${THRESHOLD:-}" ]] && threshold=(--threshold="$THRESHOLD")
out=${2:-perf-out}
mkdir -p "$out"

if [[ ! -x "$bin" ]]; then
  echo "ci-perf: building $bin"
  scripts/build.sh >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 3; }
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_' || true)
baseline=${1:-perf/baseline-${gpu:-unknown}.json}

# 1. The CI suite (configs/ci.json), verified, on the GPU, with the gate's settings. Exit 1 from the run means a strategy was
#    incorrect or failed: that is already a failure of this job, before any timing is compared.
echo "ci-perf: running the CI suite -> $out/new.json"
run_rc=0
# shellcheck disable=SC2086
"$bin" --config="${SUITE:-ci}" --backend="${BACKEND:-cuda}" $ATTNBENCH_GATE_FLAGS --verify --quiet --json="$out/new.json" ${EXTRA_RUN_FLAGS:-} \
  | tee "$out/run.log" || run_rc=$?
if [[ ! -f "$out/new.json" ]]; then
  echo "ci-perf: the run wrote no report (exit $run_rc)"
  exit 3
fi
if [[ "${PEERS:-0}" == 1 ]]; then
  python3 scripts/peer_torch.py --merge "$out/new.json" --quiet || echo "ci-perf: peer benchmark failed (ignored)"
fi

if [[ "${UPDATE_BASELINE:-0}" == 1 ]]; then
  mkdir -p "$(dirname "$baseline")"
  cp "$out/new.json" "$baseline"
  echo "ci-perf: baseline updated: $baseline (commit it)"
  exit 0
fi
if [[ ! -f "$baseline" ]]; then
  echo "ci-perf: no baseline at $baseline; create one with UPDATE_BASELINE=1 $0 $baseline"
  exit 2
fi

# 2. Compare: the console table goes to the log, markdown and CSV next to the report.
cmp_rc=0
"$bin" compare "$baseline" "$out/new.json" "${threshold[@]}" --md="$out/compare.md" \
  | tee "$out/compare.txt" || cmp_rc=$?
"$bin" compare "$baseline" "$out/new.json" "${threshold[@]}" --csv="$out/compare.csv" \
  >/dev/null || true

case $cmp_rc in
  0) echo "ci-perf: no regression" ;;
  1) echo "ci-perf: PERFORMANCE REGRESSION (see $out/compare.md)" ;;
  *) echo "ci-perf: the reports could not be compared (exit $cmp_rc)" ;;
esac
if [[ $run_rc -ne 0 && $cmp_rc -eq 0 ]]; then
  echo "ci-perf: the run reported incorrect or failed rows (exit $run_rc)"
  exit 1
fi
exit "$cmp_rc"
