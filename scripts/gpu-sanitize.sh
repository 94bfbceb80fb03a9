#!/usr/bin/env bash
# compute-sanitizer over attnbench on a GPU machine: memcheck, racecheck and synccheck of every strategy at
# paged, ragged-edge problems (S=301 is no multiple of any tile, 3 pages leave a short last page; D=64 and
# 128, fp16 and bf16, causal), then memcheck and racecheck of the fused strategy with every compiled tile.
# Each run's log and report go to OUTDIR; the summary (one line per run with its error count) is printed last.
#   scripts/gpu-sanitize.sh OUTDIR        (ATTNBENCH=build/attnbench, TIMEOUT=600 seconds per run)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-sanitize.sh OUTDIR}
mkdir -p "$out"
bin=${ATTNBENCH:-build/attnbench}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
problem=(--batch=2 --heads=3 --seq_len=301 --pages=3 --kv_layout=paged --causal --head_dim=64,128 --dtype=fp16,bf16)
quick=(--backend=cuda --verify --timer=events --warmup=0 --min_samples=1 --max_samples=2 --max_time=0.01 --quiet --no_table)
: >"$out/summary.txt"
sanitize() {  # sanitize NAME TOOL ARGS...
  local name=$1 tool=$2; shift 2
  timeout "${TIMEOUT:-600}" "$san" --tool "$tool" --error-exitcode 9 "$bin" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local errors
  errors=$(grep -Eo "(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors, [0-9]+ warnings\))" "$out/$name.log" | tail -1)
  printf '%-34s rc=%-3d %s\n' "$name" "$rc" "${errors:-no summary}" | tee -a "$out/summary.txt"
}
for tool in memcheck racecheck synccheck; do
  sanitize "all-$tool" "$tool" "${problem[@]}" "${quick[@]}" --json="$out/all-$tool.json"
done
# Every compiled fused tile, from the tuner's listing of the fused search space for these problems.
tiles=$("$bin" tune "${problem[@]}" --strategies=fused --dry_run 2>/dev/null | grep -Eo 'm[0-9]+n[0-9]+w[0-9]+s[0-9]+(ws)?' | sort -u)
for t in $tiles; do
  for tool in memcheck racecheck; do
    sanitize "fused-$t-$tool" "$tool" "${problem[@]}" "${quick[@]}" --strategies=fused --tile="$t" --json="$out/fused-$t-$tool.json"
  done
done
echo "== compute-sanitizer summary"
cat "$out/summary.txt"
