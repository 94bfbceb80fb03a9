#!/usr/bin/env bash
# Fused attention dev loop: build the standalone harness with nvcc, check correctness of every compiled
# tile, time every tile at the target shapes, time PyTorch SDPA (flash / cuDNN / efficient / math) in the
# same run, and print the fused/peer table last.
#   scripts/fused-dev.sh [OUTDIR]         build + info + check + bench + peers (on the GPU machine)
#   scripts/fused-dev.sh --build-only     build here (no GPU needed), with the ptxas resource report
# Uses build-fused/ (ignored). A prebuilt build-fused/fused_dev is reused when it runs and is newer
# than the sources; build-fused/include may hold headers this machine lacks (nlohmann/json.hpp).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build-fused
mkdir -p "$BUILD"
SRCS="kernels/fused_attention.cu kernels/fused_attention_d128.cu kernels/fused_attention_dother.cu kernels/fused_attention_wg.cu"
NVFLAGS="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Ikernels -I$BUILD/include -Xcompiler -Wall"

build() {
  local pids=() objs=() f o
  for f in $SRCS scripts/fused_dev/fused_dev.cpp; do
    o="$BUILD/$(basename "$f").o"
    objs+=("$o")
    nvcc $NVFLAGS ${PTXAS_V:+-Xptxas -v} -c "$f" -o "$o" >"$o.log" 2>&1 &
    pids+=($!)
  done
  local rc=0 i
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
  cat "$BUILD"/*.o.log
  [ $rc -eq 0 ] || { echo "BUILD FAILED"; return 1; }
  nvcc -gencode=arch=compute_90a,code=sm_90a "${objs[@]}" -o "$BUILD/fused_dev" -Xcompiler -static-libstdc++ \
    -Xcompiler -static-libgcc -lpthread || { echo "LINK FAILED"; return 1; }
}

if [ "${1:-}" = "--build-only" ]; then
  PTXAS_V=1 build
  exit $?
fi

OUT="${1:-out/fused-dev}"
mkdir -p "$OUT"
newest_src=$(ls -t $SRCS kernels/fused_*.cuh kernels/fused_attention.hpp \
             scripts/fused_dev/fused_dev.cpp | head -1)
if [ -x "$BUILD/fused_dev" ] && [ "$BUILD/fused_dev" -nt "$newest_src" ] && "$BUILD/fused_dev" version; then
  echo "using prebuilt $BUILD/fused_dev"
else
  echo "building on this machine"
  t0=$(date +%s)
  build 2>&1 | grep -vE "^$" | tail -20 || exit 1
  echo "build took $(( $(date +%s) - t0 )) s"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>/dev/null | tee "$OUT/info.txt"
"$BUILD/fused_dev" info 2>&1 | tee -a "$OUT/info.txt"
check_rc=0
rm -f "$OUT/check.txt" "$OUT/results.csv"
for fam in mma wg; do
  FUSED_DEV_FAMILY=$fam timeout 150 "$BUILD/fused_dev" check >>"$OUT/check.txt" 2>&1
  rc=$?
  [ $rc -eq 124 ] && echo "CHECK ($fam) TIMED OUT (hang?)"
  [ $rc -ne 0 ] && check_rc=1
done
grep -E "FAIL|SUMMARY|CUDA error" "$OUT/check.txt" | head -30
for fam in mma wg; do
  FUSED_DEV_FAMILY=$fam timeout 120 "$BUILD/fused_dev" bench "$OUT/results.csv" 2>&1 | tee -a "$OUT/bench.txt"
done
# Profile of the default wgmma tiles at the two target shapes (hardware counters; clocks left alone).
# Run 4 profiled m192n64w12s2 here; m128n128w8s2 became the D=128 default from that run.
if [ -n "${FUSED_DEV_NCU:-}" ]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for spec in "128 128 128 8 2 0" "64 128 64 8 2 0"; do
    timeout 90 $NCU --clock-control none --launch-skip 1 --launch-count 1 -k regex:fused_attention_fwd \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section SchedulerStats --section WarpStateStats --section Occupancy --section InstructionStats \
      --print-details all "$BUILD/fused_dev" one $spec >>"$OUT/ncu.txt" 2>&1
  done
  grep -iE "stall|Throughput|Issued Ipc|Eligible|Occupancy|Duration|Pipe" "$OUT/ncu.txt" | head -80
fi
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/fused_dev/peer_sdpa.py "$OUT/results.csv" 2>&1 | tee "$OUT/peers.txt"
python3 scripts/fused_dev/ratio_table.py "$OUT/results.csv" 2>&1 | tee "$OUT/summary.txt"
[ $check_rc -eq 0 ] && echo "CHECK: all passed" || echo "CHECK: FAILED (see $OUT/check.txt)"
exit $check_rc
