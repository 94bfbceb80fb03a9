#!/usr/bin/env bash
# Issue 20 (v5, warp-specialized tiles) in one device call: fused-dev.sh (build unless a carried
# build-fused/fused_dev runs, check of every tile, timing of the Hopper tiles at the issue's shapes,
# Nsight Compute on the ws tiles, PyTorch peers), then compute-sanitizer memcheck and racecheck on
# small cases of the ws kernel. Usage: scripts/fused-ws-device.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: fused-ws-device.sh OUTDIR}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
[ -d build-deps/lib/x86_64-linux-gnu ] && export LD_LIBRARY_PATH=$PWD/build-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
FUSED_DEV_BENCH_FAMILIES=wg FUSED_DEV_NCU=1 FUSED_DEV_NCU_SPECS="128 128 128 12 2 0 ws;64 128 128 12 2 0 ws" \
  timeout 470 scripts/fused-dev.sh "$out/fd" >"$out/fused-dev.log" 2>&1
echo "fused-dev rc=$?"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: >"$out/sanitize.txt"
for spec in "128 128 128 12 2 1 ws|1,2,300" "64 128 64 12 3 0 ws|2,1,77"; do
  args=${spec%|*}
  for tool in memcheck racecheck; do
    FUSED_DEV_ONE_SHAPE=${spec#*|} timeout 60 "$san" --tool $tool --error-exitcode 9 build-fused/fused_dev one $args \
      >"$out/san-$tool-${args// /_}.log" 2>&1
    rc=$?
    printf '%-10s %-28s shape %-9s rc=%d %s\n' "$tool" "$args" "${spec#*|}" $rc \
      "$(grep -Eo '(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors, [0-9]+ warnings\))' "$out/san-$tool-${args// /_}.log" | tail -1)" |
      tee -a "$out/sanitize.txt"
  done
done
echo "==== summary ===="
grep -E "using prebuilt|build took|BUILD FAILED" "$out/fused-dev.log"
grep -E "^(D|[0-9]+ ).*wgmma-ws" "$out/fd/info.txt"
grep -E "FAIL|SUMMARY|TIMED OUT|CUDA error" "$out/fd/check.txt" | head -20
echo "ws launches checked: $(grep -cE '^ok .* m128n[0-9]+w12s[0-9]ws ' "$out/fd/check.txt") ok, $(grep -cE '^FAIL.*ws ' "$out/fd/check.txt") failed"
grep -E "^ok .*ws " "$out/fd/check.txt" | sort -k5 -g | tail -2
grep -iE "Duration|Compute \(SM\) Throughput|Tensor|Issued Ipc|Eligible|Stall" "$out/fd/ncu.txt" | head -40
cat "$out/fd/summary.txt" 2>/dev/null
cat "$out/sanitize.txt"
tail -1 "$out/fused-dev.log"
