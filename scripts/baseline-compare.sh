#!/usr/bin/env bash
# Before/after check of a change on one GPU, in one call: build an earlier source tree (BASELINE_SRC, a
# `git archive` tarball or a folder) beside the current build, run the default command with each binary in
# turn (before, after, before, after), and compare them with the CI gate's settings and rule.
#   scripts/baseline-compare.sh OUTDIR
#   Environment: BASELINE_SRC (required), ATTNBENCH (the current binary; default build-gpu/attnbench),
#   BUILD_FLAGS (CMake flags for the baseline build), PAIRS (default 2), RUN_FLAGS (default: the gate's
#   settings from scripts/gate-settings.sh plus --verify).
# Writes OUTDIR/before-N.json, after-N.json, compare-N.md/.log (after against before), aa.log (before-1 against
# before-2, the same binary twice: what "no change" looks like) and summary.txt. Exit 1 when a compare finds a
# row slower or its status worse, 2 on unusable input.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: baseline-compare.sh OUTDIR}
src=${BASELINE_SRC:?set BASELINE_SRC to a source tarball or folder of the earlier commit}
after=${ATTNBENCH:-$PWD/build-gpu/attnbench}
[[ -x "$after" ]] || { echo "baseline-compare: no current binary at $after" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=scripts/gate-settings.sh
source scripts/gate-settings.sh
run_flags=${RUN_FLAGS:-"$ATTNBENCH_GATE_FLAGS --verify"}

base_dir=$out/baseline-src
rm -rf "$base_dir"
mkdir -p "$base_dir"
if [[ -d "$src" ]]; then
  cp -a "$src/." "$base_dir/"
else
  tar -xf "$src" -C "$base_dir" || { echo "baseline-compare: cannot unpack $src" >&2; exit 2; }
fi
deps=()
[[ -d build-deps ]] && deps=(-DCMAKE_PREFIX_PATH="$PWD/build-deps")
echo "== building the baseline" | tee "$out/summary.txt"
if ! (cd "$base_dir" && BUILD_DIR="$base_dir/build" scripts/build.sh -DBUILD_TESTING=OFF ${BUILD_FLAGS:-} "${deps[@]}") \
    >"$out/baseline-build.log" 2>&1; then
  tail -30 "$out/baseline-build.log"
  exit 2
fi
before=$base_dir/build/attnbench

rc=0
for i in $(seq 1 "${PAIRS:-2}"); do
  # shellcheck disable=SC2086
  "$before" $run_flags --quiet --json="$out/before-$i.json" >"$out/before-$i.log" 2>&1 || rc=1
  # shellcheck disable=SC2086
  "$after" $run_flags --quiet --json="$out/after-$i.json" >"$out/after-$i.log" 2>&1 || rc=1
done
for i in $(seq 1 "${PAIRS:-2}"); do
  "$after" compare "$out/before-$i.json" "$out/after-$i.json" >"$out/compare-$i.log" 2>&1
  c=$?
  "$after" compare "$out/before-$i.json" "$out/after-$i.json" --md="$out/compare-$i.md" >/dev/null 2>&1
  echo "== pair $i: compare rc=$c" | tee -a "$out/summary.txt"
  cat "$out/compare-$i.log" >>"$out/summary.txt"
  [[ $c -ne 0 ]] && rc=1
done
if [[ ${PAIRS:-2} -ge 2 ]]; then
  "$after" compare "$out/before-1.json" "$out/before-2.json" >"$out/aa.log" 2>&1
  echo "== A/A (baseline twice): rc=$?" | tee -a "$out/summary.txt"
  cat "$out/aa.log" >>"$out/summary.txt"
fi
rm -rf "$base_dir"
exit $rc
