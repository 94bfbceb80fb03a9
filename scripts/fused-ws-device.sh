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
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize() {  # memcheck and racecheck of two small ws cases (the binary must exist)
  : >"$out/sanitize.txt"
  for spec in "128 128 128 12 2 1 ws|1,2,300" "64 128 64 12 3 0 ws|2,1,77"; do
    local args=${spec%|*} log
    for tool in memcheck racecheck; do
      log="$out/san-$tool-${args// /_}.log"
      FUSED_DEV_ONE_SHAPE=${spec#*|} timeout 45 "$san" --tool $tool --error-exitcode 9 build-fused/fused_dev one $args >"$log" 2>&1
      local rc=$?
      printf '%-10s %-24s shape %-9s rc=%-3d %s\n' "$tool" "$args" "${spec#*|}" $rc \
        "$(grep -Eo '(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors, [0-9]+ warnings\))' "$log" | tail -1)" |
        tee -a "$out/sanitize.txt"
      [ $rc -eq 124 ] && { echo "sanitizer timed out (hang?): skipping the rest" | tee -a "$out/sanitize.txt"; return; }
    done
  done
}
sanitized=0
if [ -x build-fused/fused_dev ] && build-fused/fused_dev version >/dev/null 2>&1; then sanitize; sanitized=1; fi
FUSED_DEV_BENCH_FAMILIES=wg FUSED_DEV_NCU=1 FUSED_DEV_NCU_SPECS="128 128 128 12 2 0 ws;64 128 128 12 2 0 ws" \
  timeout 420 scripts/fused-dev.sh "$out/fd" >"$out/fused-dev.log" 2>&1
echo "fused-dev rc=$?"
[ $sanitized = 0 ] && sanitize
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
