#!/usr/bin/env bash
# The scale-out measurements of docs/scale-out-devices.md, on one multi-GPU host (issue 48): each STEP runs
# the real binary on 1, 2 and every GPU and writes its reports, caches and logs under OUTDIR, with one line
# per command in OUTDIR/times.tsv (step, devices, wall seconds, exit code); scripts/scale_out_summary.py
# turns OUTDIR into the tables.
#   scripts/scale-out-bench.sh OUTDIR STEP...      with the binary in $ATTNBENCH (default build/attnbench)
# Steps:
#   run      SCALE_SUITE (default: the three Llama-3.1-8B suites, 44 problems) with run's default settings
#   default  the main job's problem (one problem: a problem is the unit a run hands out)
#   tune     tune --search=exhaustive of the main job's problem (every strategy), one cache per device count
#   baseline the same tune without successive halving (--halving_keep=0) on every GPU: the exhaustive winners
#            the tune's must match within 1% (issue 48); give it SCALE_STEP_TIMEOUT for a ~10-minute GPU tune
#   quiet    SCALE_QUIET_SUITE under the CI gate's settings on GPU 0 alone and on every GPU: GPU 0's rows compared
#   resume   SCALE_QUIET_SUITE on every GPU under the gate's settings, SIGTERM once half its problems are in
#            the journal, then --resume; the rows counted and compared with the uninterrupted run
#   fleet    scripts/slurm/tune-array.sbatch as one task per GPU (the variables Slurm sets, CUDA_VISIBLE_DEVICES
#            one GPU each), merge.sbatch, and the same tune in one process; the winners compared
# Environment: SCALE_FLEET_SUITE (the fleet's tune grid, default ci), SCALE_RUN_FLAGS (extra flags for run and quiet), SCALE_TUNE_FLAGS (extra flags for tune),
# SCALE_STEP_TIMEOUT (seconds one command may take, default 300), SCALE_DEVICE_SETS (default "1 2 N");
# SCALE_BACKEND=cpu with SCALE_GPUS=N tries the script on the CPU backend (N worker processes, tiny problems).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: scripts/scale-out-bench.sh OUTDIR STEP..." >&2; exit 2; }
out=$1; shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=${ATTNBENCH:-$root/build/attnbench}
[[ -x $bin ]] || { echo "scale-out-bench: no attnbench binary at '$bin' (set ATTNBENCH)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")  # the fleet's tasks run in their own folder
suite=${SCALE_SUITE:-llama3.1-8b-decode,llama3.1-8b-chunked-prefill,llama3.1-8b-prefill}
quiet_suite=${SCALE_QUIET_SUITE:-llama3.1-8b-decode}
step_timeout=${SCALE_STEP_TIMEOUT:-300}
read -r -a run_flags <<<"${SCALE_RUN_FLAGS:-}"
read -r -a tune_flags <<<"${SCALE_TUNE_FLAGS:-}"
# shellcheck source=gate-settings.sh
source "$root/scripts/gate-settings.sh"
read -r -a gate <<<"$ATTNBENCH_GATE_FLAGS"
main_problem=(--batch=32 --heads=12 --seq_len=512)  # the main job's problem, as the README runs it

if [[ ${SCALE_BACKEND:-cuda} == cpu ]]; then
  # A smoke test of the script itself: SCALE_GPUS worker processes on the CPU backend, tiny problems.
  gpus=${SCALE_GPUS:-2}
  suite=${SCALE_SUITE:-ci}
  quiet_suite=${SCALE_QUIET_SUITE:-ci}
  main_problem=(--backend=cpu --batch=1 --heads=2 --seq_len=64 --head_dim=16)
  tiny=(--backend=cpu --batch=1 --heads=2 --seq_len=40 --head_dim=16 --max_time=0.02)
  run_flags+=("${tiny[@]}")
  tune_flags+=(--backend=cpu --max_time=0.02)
  fleet_sizes="--batch=1 --heads=2 --seq_len=40 --head_dim=16"
  gate=(--rounds=4 --min_samples=3 --max_time=0.02)
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [[ $gpus -ge 1 ]] || { echo "scale-out-bench: nvidia-smi lists no GPU" >&2; exit 2; }
fi
sets=${SCALE_DEVICE_SETS:-$(printf '%s\n' 1 2 "$gpus" | awk '$1 <= '"$gpus"' && !seen[$1]++' | xargs)}
devices_of() {  # N -> the --devices value for the first N GPUs
  local n=$1 list=0 i
  for ((i = 1; i < n; i++)); do list+=",$i"; done
  echo "$list"
}

# Runs one command with the step's time limit; appends "step<TAB>devices<TAB>wall s<TAB>rc" to times.tsv.
timed() {
  local step=$1 n=$2; shift 2
  local t0 rc
  t0=$(date +%s%N)
  timeout --signal=TERM --kill-after=30 "$step_timeout" "$@"
  rc=$?
  record "$step" "$n" "$t0" "$rc"
  return $rc
}

# Appends "step<TAB>devices<TAB>wall s<TAB>rc" to times.tsv for a command that started at $3 (date +%s%N).
record() {
  local s
  s=$(awk -v a="$3" -v b="$(date +%s%N)" 'BEGIN {printf "%.2f", (b - a) / 1e9}')
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$s" "$4" >>"$out/times.tsv"
  echo "scale-out-bench: $1 on $2 GPU(s): rc=$4, $s s" >&2
}

step_run() {  # $1: step name, the rest: the grid flags
  local name=$1; shift
  for n in $sets; do
    timed "$name" "$n" "$bin" run "$@" "${run_flags[@]}" --devices="$(devices_of "$n")" -q \
      --json="$out/$name-$n.json" >"$out/$name-$n.log" 2>&1
  done
}

step_tune() {
  for n in $sets; do
    timed tune "$n" "$bin" tune "${main_problem[@]}" --search=exhaustive "${tune_flags[@]}" \
      --devices="$(devices_of "$n")" --cache="$out/tune-$n.cache.json" --json="$out/tune-$n.json" \
      >"$out/tune-$n.log" 2>&1
  done
}

step_baseline() {
  timed baseline "$gpus" "$bin" tune "${main_problem[@]}" --search=exhaustive "${tune_flags[@]}" --halving_keep=0 \
    --devices="$(devices_of "$gpus")" --cache="$out/tune-baseline.cache.json" --json="$out/tune-baseline.json" \
    >"$out/tune-baseline.log" 2>&1
}

# The command of the quiet suite under the gate's settings on the first N GPUs, into the array quiet_cmd.
quiet_command() {
  quiet_cmd=("$bin" run --config="$quiet_suite" "${gate[@]}" "${run_flags[@]}" --devices="$(devices_of "$1")" -q)
}

step_quiet() {
  quiet_command 1
  timed quiet 1 "${quiet_cmd[@]}" --json="$out/quiet-1.json" >"$out/quiet-1.log" 2>&1
  quiet_command "$gpus"
  timed quiet "$gpus" "${quiet_cmd[@]}" --json="$out/quiet-$gpus.json" >"$out/quiet-$gpus.log" 2>&1
  # GPU 0's rows of the every-GPU run against the same rows on GPU 0 alone.
  python3 - "$out/quiet-$gpus.json" "$out/quiet-all-gpu0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"] = [r for r in d["results"] if r.get("device", 0) == 0]
json.dump(d, open(sys.argv[2], "w"))
PY
  "$bin" compare "$out/quiet-1.json" "$out/quiet-all-gpu0.json" --json="$out/quiet-compare.json" \
    >"$out/quiet-compare.txt" 2>&1
  echo "quiet compare rc=$?" >>"$out/quiet-compare.txt"
}

# Problems finished in a run's journal (its lines after the header) and the grid's size (from the header).
journal_done() { [[ -f $1 ]] && echo $(( $(wc -l <"$1") - 1 )) || echo 0; }
journal_grid() { [[ -f $1 ]] && head -1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["grid"]["size"])' 2>/dev/null; }

step_resume() {
  local pid report=$out/resume-$gpus.json size="" done=0 t0 waited
  [[ -f $out/quiet-$gpus.json ]] || { echo "scale-out-bench: resume needs the quiet step first (its report)" >&2; return 2; }
  rm -f "$report" "$report.journal"
  quiet_command "$gpus"
  t0=$(date +%s%N)
  "${quiet_cmd[@]}" --json="$report" >"$out/resume-first.log" 2>&1 &
  pid=$!
  # SIGTERM once half the grid's problems are journaled (at least one, fewer than all), not at a guessed time.
  while kill -0 "$pid" 2>/dev/null; do
    [[ -n $size ]] || size=$(journal_grid "$report.journal")
    done=$(journal_done "$report.journal")
    if [[ -n $size && $done -ge 1 && $(( 2 * done )) -ge $size ]]; then break; fi
    sleep 0.1
  done
  waited=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  echo "first part: rc=$? after SIGTERM at ${waited}s with $done of ${size:-?} problems journaled" >"$out/resume-summary.txt"
  timed resume "$gpus" "${quiet_cmd[@]}" --json="$report" --resume >"$out/resume-second.log" 2>&1
  grep -m1 "already done" "$out/resume-second.log" >>"$out/resume-summary.txt"
  "$bin" compare "$out/quiet-$gpus.json" "$report" --json="$out/resume-compare.json" >"$out/resume-compare.txt" 2>&1
  echo "resume compare rc=$?" >>"$out/resume-compare.txt"
}

step_fleet() {
  local fleet=$out/fleet i pids=()
  rm -rf "$fleet"; mkdir -p "$fleet"
  local args="--config=${SCALE_FLEET_SUITE:-ci} ${fleet_sizes:-} ${tune_flags[*]}"
  local t0
  t0=$(date +%s%N)
  for ((i = 0; i < gpus; i++)); do
    (cd "$fleet" && SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=$gpus SLURM_ARRAY_JOB_ID=1 \
       SLURM_JOB_ID=$((100 + i)) CUDA_VISIBLE_DEVICES=$i ATTNBENCH="$bin" ATTNBENCH_ARGS="$args" ATTNBENCH_OUT="$fleet" \
       timeout "$step_timeout" bash "$root/scripts/slurm/tune-array.sbatch" >"$fleet/task-$i.out" 2>&1) &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  (cd "$fleet" && ATTNBENCH="$bin" ATTNBENCH_OUT="$fleet" ATTNBENCH_MERGE=cache bash "$root/scripts/slurm/merge.sbatch" \
     >"$fleet/merge.out" 2>&1) || rc=$?
  record fleet "$gpus" "$t0" "$rc"
  # shellcheck disable=SC2086
  timed fleet 1 "$bin" tune $args --devices=0 --cache="$fleet/one-process.cache.json" >"$fleet/one-process.log" 2>&1
}

for s in "$@"; do
  case $s in
    run) step_run run --config="$suite" ;;
    default) step_run default "${main_problem[@]}" ;;
    tune) step_tune ;;
    baseline) step_baseline ;;
    quiet) step_quiet ;;
    resume) step_resume ;;
    fleet) step_fleet ;;
    *) echo "scale-out-bench: unknown step '$s' (run, default, tune, baseline, quiet, resume, fleet)" >&2; exit 2 ;;
  esac
done
python3 "$root/scripts/scale_out_summary.py" "$out" | tee "$out/summary.md"
