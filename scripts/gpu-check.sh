#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU: build with CMake + Ninja for sm_90a, run the `gpu`-labelled
# tests, then the benchmarks (default command, the issue shapes, timers, cold/hot, the PyTorch peer), and
# write every report and log into OUTDIR. A summary table is printed last.
#   scripts/gpu-check.sh OUTDIR [STAGES]
#   STAGES: comma list of build,tests,fault,bench,timers,peer,grid,count,tune,tune-ci,tune-pages8,exhaustive,slow,
#   gate,sanitize,baseline (default: all but tune-ci, tune-pages8, exhaustive, gate, sanitize and baseline, which take
#   minutes each; baseline needs BASELINE_SRC, an earlier commit's `git archive` tarball: scripts/baseline-compare.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-check.sh OUTDIR [STAGES]}
stages=${2:-build,tests,fault,bench,timers,peer,grid,count,tune,slow}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD_DIR:-$PWD/build-gpu}
bin=$build/attnbench
export ATTNBENCH=$bin  # the Python scripts ask the binary for labels, keys and grids (scripts/attnbench_rows.py)
has() { [[ ",$stages," == *",$1,"* ]]; }
log() { echo "== $*" | tee -a "$out/summary.txt"; }
timed() {  # timed NAME CMD...: run, keep its output, record wall time
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%-28s rc=%d  %d.%03ds\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) | tee -a "$out/summary.txt"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$out/nvidia-smi.txt" 2>&1
deps=()
# The GPU image may lack CLI11/fmt/nlohmann-json: scripts/pack-build-deps.sh makes build-deps/ to carry.
[[ -d build-deps ]] && deps=(-DCMAKE_PREFIX_PATH="$PWD/build-deps")
if has build; then
  timed build env BUILD_DIR="$build" scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90a "${deps[@]}" || { tail -40 "$out/build.log"; exit 1; }
fi
if has tests; then
  timed ctest-gpu ctest --test-dir "$build" -L gpu --output-on-failure -j 1 --timeout 300
  timed ctest-cpu ctest --test-dir "$build" -L cpu -j 8 --timeout 600
  grep -E "tests passed|tests failed|Not Run|Failed|\*\*\*" "$out/ctest-gpu.log" "$out/ctest-cpu.log" | tee -a "$out/summary.txt"
fi
if has bench; then
  timed default $bin --batch=32 --heads=12 --seq_len=512 --verify --json="$out/default.json" --quiet
  timed default-again $bin --batch=32 --heads=12 --seq_len=512 --verify --json="$out/default2.json" --quiet
  timed compare-rerun $bin compare "$out/default.json" "$out/default2.json"
  timed default-third $bin --batch=32 --heads=12 --seq_len=512 --verify --json="$out/default3.json" --quiet
  timed nested-graph-rerun $bin --strategies=nested --timer=graph --json="$out/nested-graph2.json" --quiet
  timed pages8 $bin --batch=32 --heads=12 --seq_len=512 --pages=8 --verify --json="$out/pages8.json" --quiet
  timed long-d128 $bin --batch=8 --heads=16 --seq_len=2048 --head_dim=128 --verify --json="$out/long.json" --quiet
  timed awkward $bin --batch=3 --heads=5 --seq_len=1000 --pages=7 --head_dim=64,128 --kv_layout=contiguous,paged --dtype=fp16,bf16 --causal --verify --json="$out/awkward.json" --quiet --max_time=0.2
  timed fused-long $bin --batch=2 --heads=16 --seq_len=8192 --head_dim=128 --strategies=fused,fully_batched --verify --json="$out/fused-long.json" --quiet
  timed causal $bin --batch=32 --heads=12 --seq_len=512 --causal --verify --json="$out/causal.json" --quiet
fi
if has timers; then
  timed nested-events $bin --strategies=nested --timer=events --json="$out/nested-events.json" --quiet
  timed nested-graph $bin --strategies=nested --timer=graph --json="$out/nested-graph.json" --quiet
  timed nested-cupti $bin --strategies=nested --timer=cupti --json="$out/nested-cupti.json" --quiet
  timed hot $bin --hot --json="$out/hot.json" --quiet
fi
if has peer; then
  # PyTorch SDPA (flash, cuDNN, efficient) and unfused matmul-softmax-matmul, merged beside attnbench's rows.
  for f in default causal long fused-long; do
    [[ -f "$out/$f.json" ]] && timed "peer-$f" python3 scripts/peer_torch.py --merge "$out/$f.json" --verify
  done
fi
if has fault; then
  # A strategy that breaks the CUDA context: it fails with its message, every other strategy still runs.
  timed fault env ATTNBENCH_INJECT_FAULT=head_batched $bin --verify --json="$out/fault.json" --quiet
fi
if has grid; then
  timed grid $bin --batch=8 --heads=16 --seq_len=256:4096:*2 --head_dim=64,128 --strategies=head_batched,fully_batched,ptr_array,fused --json="$out/grid.json" --quiet --max_time=0.5
  timed peer-grid python3 scripts/peer_torch.py --merge "$out/grid.json"
fi
# Tuning. The default grid is the default command's problem (B=32 H=12 S=512 D=64, one page). The tuner
# times with CUDA-graph replay (its default on a GPU), so reruns with the cache use --timer=graph too, and
# scripts/tune_repro.py sets each rerun beside the tuned forward time.
dflt=(--batch=32 --heads=12 --seq_len=512)
if has count; then
  # The size of the exhaustive space for every GEMM of the default grid (and of pages=8), nothing timed.
  timed count-exhaustive $bin tune "${dflt[@]}" --pages=${COUNT_PAGES:-1,8} --search=exhaustive --dry_run
  timed count-top8 $bin tune "${dflt[@]}" --pages=${COUNT_PAGES:-1,8} --dry_run
fi
if has tune-ci; then
  timed tune-ci $bin tune --config=ci --cache="$out/cache-ci.json"
fi
if has tune; then
  timed tune-top8 $bin tune "${dflt[@]}" --cache="$out/cache-top8.json"
  timed heuristic-graph $bin "${dflt[@]}" --timer=graph --verify --json="$out/heuristic-graph.json" --quiet
  timed cached-top8 $bin "${dflt[@]}" --timer=graph --cache="$out/cache-top8.json" --verify --json="$out/cached-top8.json" --quiet
  timed repro-top8 python3 scripts/tune_repro.py "$out/cache-top8.json" "$out/cached-top8.json"
  timed compare-top8 $bin compare "$out/heuristic-graph.json" "$out/cached-top8.json"
  timed cached-top8-events $bin "${dflt[@]}" --cache="$out/cache-top8.json" --verify --json="$out/cached-top8-events.json" --quiet
fi
if has tune-pages8; then
  timed tune-top8-p8 $bin tune "${dflt[@]}" --pages=1,8 --cache="$out/cache-top8-p8.json"
fi
if has exhaustive; then
  # The whole space, one strategy per call so each one's wall time shows; they share one cache file, and a
  # shape tuned by an earlier strategy is taken from it (--skip_cached) rather than searched again.
  # EXH_STRATEGIES picks the strategies, EXH_TIMEOUT (seconds) bounds each call; the cache is written
  # after every shape, so a call that runs out keeps what it finished.
  for s in ${EXH_STRATEGIES:-head_batched fully_batched ptr_array nested fused}; do
    timed "exh-$s" timeout "${EXH_TIMEOUT:-900}" $bin tune "${dflt[@]}" --strategies=$s --search=exhaustive --skip_cached \
      --cache="$out/cache-exh.json"
  done
  [[ -f "$out/cache-exh.json" ]] || log "no exhaustive cache was written"
  timed cached-exh $bin "${dflt[@]}" --timer=graph --cache="$out/cache-exh.json" --verify --json="$out/cached-exh.json" --quiet
  timed repro-exh python3 scripts/tune_repro.py "$out/cache-exh.json" "$out/cached-exh.json"
  [[ -f "$out/heuristic-graph.json" ]] || timed heuristic-graph $bin "${dflt[@]}" --timer=graph --verify --json="$out/heuristic-graph.json" --quiet
  timed compare-exh $bin compare "$out/heuristic-graph.json" "$out/cached-exh.json"
fi
if has slow; then
  # A deliberately slowed run: a worse fused tile and fp32 score matrices.
  timed slowed $bin --batch=32 --heads=12 --seq_len=512 --tile=m64n128w4s2 --scores=fp32 --json="$out/slowed.json" --quiet
  timed compare $bin compare "$out/default.json" "$out/slowed.json"
fi
if has gate; then
  # The CI gate's false-alarm rate and power (docs/ci-gate.md): GATE_RUNS unchanged runs of each command.
  ATTNBENCH=$bin timed gate-study scripts/gate-study.sh "$out/gate" "${GATE_RUNS:-10}"
fi
if has sanitize; then
  ATTNBENCH=$bin timed sanitize scripts/gpu-sanitize.sh "$out/sanitize"
  cat "$out/sanitize/summary.txt" >>"$out/summary.txt"
fi
if has baseline; then
  ATTNBENCH=$bin timed baseline scripts/baseline-compare.sh "$out/baseline"
  cat "$out/baseline/summary.txt" >>"$out/summary.txt"
fi
log "tables"
for f in default default2 fault pages8 long causal fused-long hot nested-events nested-graph nested-cupti heuristic-graph cached-top8 cached-exh slowed; do
  [[ -f "$out/$f.json" ]] && $bin report "$out/$f.json" 2>&1 | tee -a "$out/summary.txt"
done
exit 0
