#!/usr/bin/env bash
# Fused attention dev loop: build the harness (CMake target attnbench_fused_dev, tools/fused_dev/, linking
# the project's core and CUDA libraries), check correctness of every compiled tile, time every tile at the
# target shapes, time PyTorch SDPA (flash / cuDNN / efficient / math) in the same run, and print the
# fused/peer table; then the issue's six rows again with fused's samples interleaved with cuDNN's and flash's
# (tools/fused_dev/peer_interleaved.py: an H200 slows within seconds of steady work, so only interleaved
# series compare to a few tenths of a percent).
#   scripts/fused-dev.sh [OUTDIR]         build + info + check + bench + peers (on the GPU machine)
#   scripts/fused-dev.sh --build-only     build here (no GPU needed), with the ptxas resource report
# Builds in build-fused/ (ignored; FUSED_BUILD_DIR overrides) with `cmake --build --target
# attnbench_fused_dev attnbench_fused_capi attnbench` (the binary: the peer scripts take FLOPs from its `grid`,
# tools/fused_dev/problem_work.py), for sm_90a (CMAKE_CUDA_ARCHITECTURES=90a: -gencode=arch=compute_90a,code=sm_90a plus
# its PTX), tests off. PTXAS_V=1 adds the ptxas resource report (-Xptxas -v) of the fused kernels to any
# build. A build-deps/ folder (scripts/pack-build-deps.sh, for a GPU image without CLI11/fmt/nlohmann-json)
# is used as the prefix path. A prebuilt build-fused/fused_dev is reused when it runs and is newer than
# every source.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
BUILD=${FUSED_BUILD_DIR:-build-fused}
BIN=$BUILD/fused_dev
HARNESS=tools/fused_dev

build() {  # build ON|OFF (the ptxas report)
  local ptxas=$1 opts=()
  [ -d build-deps ] && opts+=(-DCMAKE_PREFIX_PATH="$PWD/build-deps")
  command -v ccache >/dev/null && opts+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  command -v ninja >/dev/null && [ ! -f "$BUILD/CMakeCache.txt" ] && opts+=(-G Ninja)
  mkdir -p "$BUILD"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DBUILD_TESTING=OFF -DATTNBENCH_PTXAS_VERBOSE="$ptxas" "${opts[@]}" >"$BUILD/configure.log" 2>&1 ||
    { tail -20 "$BUILD/configure.log"; echo "CONFIGURE FAILED"; return 1; }
  # The report prints when the kernels compile: with it on, compile them again (ccache replays it).
  [ "$ptxas" = ON ] && find "$BUILD" -name 'fused_attention*.cu.o' -delete
  cmake --build "$BUILD" --target attnbench_fused_dev attnbench_fused_capi attnbench || { echo "BUILD FAILED"; return 1; }
}

ptxas=OFF
[ -n "${PTXAS_V:-}" ] && ptxas=ON
if [ "${1:-}" = "--build-only" ]; then
  build ON
  exit $?
fi

OUT="${1:-out/fused-dev}"
mkdir -p "$OUT"
if [ -x "$BIN" ] && [ -x "$BUILD/attnbench" ] && [ -z "$(find kernels src "$HARNESS" CMakeLists.txt -type f -newer "$BIN" | head -1)" ] &&
   "$BIN" version; then
  echo "using prebuilt $BIN"
else
  echo "building on this machine"
  t0=$(date +%s)
  build "$ptxas" 2>&1 | grep -vE "^$" | tail -20
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
  echo "build took $(( $(date +%s) - t0 )) s"
fi
export ATTNBENCH="$(cd "$BUILD" && pwd)/attnbench"  # the binary peer_sdpa.py and peer_interleaved.py ask for FLOPs
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>/dev/null | tee "$OUT/info.txt"
"$BIN" info 2>&1 | tee -a "$OUT/info.txt"
check_rc=0
rm -f "$OUT/check.txt" "$OUT/results.csv"
for fam in mma wg; do
  FUSED_DEV_FAMILY=$fam timeout 150 "$BIN" check >>"$OUT/check.txt" 2>&1
  rc=$?
  [ $rc -eq 124 ] && echo "CHECK ($fam) TIMED OUT (hang?)"
  [ $rc -ne 0 ] && check_rc=1
done
grep -E "FAIL|SUMMARY|CUDA error" "$OUT/check.txt" | head -30
for fam in ${FUSED_DEV_BENCH_FAMILIES:-mma wg}; do  # e.g. FUSED_DEV_BENCH_FAMILIES=wg: time the Hopper tiles only
  FUSED_DEV_FAMILY=$fam timeout 120 "$BIN" bench "$OUT/results.csv" 2>&1 | tee -a "$OUT/bench.txt"
done
# Profile of the default wgmma tiles at the two target shapes (hardware counters; clocks left alone).
# Run 4 profiled m192n64w12s2 here; m128n128w8s2 became the D=128 default from that run.
if [ -n "${FUSED_DEV_NCU:-}" ]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  # FUSED_DEV_NCU_SPECS: ';'-separated `fused_dev one` argument lists (e.g. "128 128 128 12 2 0 ws").
  IFS=';' read -ra specs <<<"${FUSED_DEV_NCU_SPECS:-128 128 128 8 2 0;64 128 64 8 2 0}"
  for spec in "${specs[@]}"; do
    timeout 90 $NCU --clock-control none --launch-skip 1 --launch-count 1 -k regex:fused_attention_fwd \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section SchedulerStats --section WarpStateStats --section Occupancy --section InstructionStats \
      --print-details all "$BIN" one $spec >>"$OUT/ncu.txt" 2>&1
  done
  grep -iE "stall|Throughput|Issued Ipc|Eligible|Occupancy|Duration|Pipe" "$OUT/ncu.txt" | head -80
fi
PYTHONUNBUFFERED=1 timeout 120 python3 "$HARNESS/peer_sdpa.py" "$OUT/results.csv" 2>&1 | tee "$OUT/peers.txt"
python3 "$HARNESS/ratio_table.py" "$OUT/results.csv" 2>&1 | tee "$OUT/summary.txt"
if [ -f "$BUILD/libattnbench_fused_capi.so" ]; then
  PYTHONUNBUFFERED=1 timeout 300 python3 "$HARNESS/peer_interleaved.py" --lib "$BUILD/libattnbench_fused_capi.so" \
    --json "$OUT/interleaved.json" 2>&1 | tee "$OUT/interleaved.txt"
fi
[ $check_rc -eq 0 ] && echo "CHECK: all passed" || echo "CHECK: FAILED (see $OUT/check.txt)"
exit $check_rc
