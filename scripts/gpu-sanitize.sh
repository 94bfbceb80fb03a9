#!/usr/bin/env bash
# compute-sanitizer over attnbench on a GPU machine: memcheck, racecheck and synccheck of every strategy at
# paged, ragged-edge problems (S=301 is no multiple of any tile, 3 pages leave a short last page; D=64 and
# 128, fp16 and bf16, causal), then memcheck and racecheck of the fused strategy with every compiled tile.
# Each run's log and report go to OUTDIR; the summary (one line per run with its error count) is printed last.
# The peak-GEMM probe is off (ATTNBENCH_NO_PEAK_GEMM=1): racecheck reports cuBLAS's own kernel (nvjet) and, with
# that kernel left uninstrumented, faults in it; the fused runs instrument only the fused kernels (--kernel-name).
#   scripts/gpu-sanitize.sh OUTDIR        (ATTNBENCH=build/attnbench, TIMEOUT=600 seconds per run)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-sanitize.sh OUTDIR}
mkdir -p "$out"
bin=${ATTNBENCH:-build/attnbench}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export ATTNBENCH_NO_PEAK_GEMM=1
problem=(--batch=2 --heads=3 --seq_len=301 --pages=3 --kv_layout=paged --causal --head_dim=64,128 --dtype=fp16,bf16)
quick=(--backend=cuda --verify --timer=events --warmup=0 --min_samples=1 --max_samples=2 --max_time=0.01 --quiet --no_table)
: >"$out/summary.txt"
sanitize() {  # sanitize NAME TOOL [--kernel-name FILTER] ARGS...
  local name=$1 tool=$2 filter=(); shift 2
  if [[ ${1:-} == --kernel-name ]]; then filter=(--kernel-name "$2"); shift 2; fi
  timeout "${TIMEOUT:-600}" "$san" --tool "$tool" "${filter[@]}" --error-exitcode 9 "$bin" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local errors
  errors=$(grep -Eo "(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors, [0-9]+ warnings\))" "$out/$name.log" | tail -1)
  printf '%-34s rc=%-3d %s\n' "$name" "$rc" "${errors:-no summary}" | tee -a "$out/summary.txt"
}
for tool in memcheck racecheck synccheck; do
  sanitize "all-$tool" "$tool" "${problem[@]}" "${quick[@]}" --json="$out/all-$tool.json"
done
# Every compiled fused tile, from the tuner's listing of the fused search space for these problems.
tiles=$("$bin" tune "${problem[@]}" --strategies=fused --dry_run 2>/dev/null | grep -Eo 'm[0-9]+n[0-9]+w[0-9]+s[0-9]+(wsp?)?' | sort -u)
for t in $tiles; do
  for tool in memcheck racecheck; do
    sanitize "fused-$t-$tool" "$tool" --kernel-name kns=fused_attention_fwd "${problem[@]}" "${quick[@]}" --strategies=fused --tile="$t" --json="$out/fused-$t-$tool.json"
  done
done
echo "== compute-sanitizer summary"
cat "$out/summary.txt"
