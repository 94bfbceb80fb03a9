#!/usr/bin/env bash
# Regenerates every report and cache the docs show, on a GPU machine, from the repository root, then rewrites
# the generated blocks of README.md and docs/*.md from them (scripts/doc-samples.sh):
#   scripts/doc-results.sh                    with the binary in $ATTNBENCH, else build/attnbench
# Files are named by the card (device 0's model: h100-*, h200-*, ...) under docs/results/:
#   CARD-default.json        the main job (every strategy and in-process peer, --verify) + PyTorch's SDPA peers
#                            (peer_torch --merge)
#   CARD-prefill.json        fused and the in-process peers on docs/results/suites/prefill.json (prefill, head_dim
#                            64 and 128) + PyTorch's peers
#   CARD-decode.json         the same on docs/results/suites/decode.json (decode, q_len 1)
# The in-process peers are those the binary finds (docs/peers.md; libcudnn must be on the loader's path).
#   CARD-cache-default.json  `attnbench tune` (heuristic top-8, every strategy) of the main job's problem
#   CARD-cache-tiles.json    `attnbench tune --strategies=fused` (every compiled tile) of both suites
# The same five files of another card are removed and the docs' references to them renamed, so the docs
# always name the card that measured them. Estimated at 2-3 minutes of GPU time on an H100 (each step's time
# is printed; every step is bounded by DOC_RESULTS_STEP_TIMEOUT). The binary must be built from a committed tree (its reports record `git describe`; the
# doc_samples test fails on a report older than the last change to kernels/ or src/, or "-dirty").
#
# Environment:
#   DOC_RESULTS_COPY_TO=DIR   also copy README.md, docs/*.md and docs/results/ into DIR (a device run's $OUT),
#                             after the last step, whether or not every step succeeded
#   DOC_RESULTS_STEP_TIMEOUT=S  seconds one step may take (default 150; a run stopped by it writes what finished)
#   DOC_RESULTS_GPUS=0,1,2,3  run the four lanes of steps (default, prefill, decode, the tunes) at once, one a GPU
#                             of the list (identical cards: the reports name device 0's model)
#   DOC_RESULTS_SMOKE=1       dry run of the whole pipeline on the CPU backend at tiny shapes, in a scratch copy
#                             of the docs (printed at the end); PyTorch's rows are stand-ins (copies of fused's
#                             rows), nothing under docs/ changes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${ATTNBENCH:-build/attnbench}
[[ -x $bin ]] || { echo "doc-results: no attnbench binary at '$bin' (set ATTNBENCH)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
export ATTNBENCH=$bin  # peer_torch asks the binary for labels and keys
smoke=${DOC_RESULTS_SMOKE:-0}
sets=(default prefill decode cache-default cache-tiles)

if [[ $smoke == 1 ]]; then
  # A scratch copy of what the pipeline reads and writes: the docs, their results, the renderer.
  work=$(mktemp -d "${TMPDIR:-/tmp}/doc-results-smoke.XXXXXX")
  mkdir -p "$work/scripts" "$work/docs"
  cp README.md "$work/"
  cp docs/*.md "$work/docs/"
  cp -r docs/results "$work/docs/results"
  cp scripts/doc-samples.sh "$work/scripts/"
  cd "$work"
  # Tiny problems of the same kinds (prefill at two head_dims, decode contiguous and paged, MQA).
  cat >docs/results/suites/prefill.json <<'EOF'
{"name": "doc-prefill-smoke", "description": "smoke", "grids": [
  {"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 64, "causal": [false, true]},
  {"batch": 1, "heads": 2, "seq_len": 96, "head_dim": 128}]}
EOF
  cat >docs/results/suites/decode.json <<'EOF'
{"name": "doc-decode-smoke", "description": "smoke", "grids": [
  {"batch": 2, "heads": 4, "kv_heads": 2, "head_dim": 128, "seq_len": 128, "q_len": 1, "dtype": "bf16"},
  {"batch": 2, "heads": 4, "kv_heads": 2, "head_dim": 128, "seq_len": 128, "q_len": 1, "page_size": 16, "kv_layout": "paged", "dtype": "bf16"},
  {"batch": 2, "heads": 4, "kv_heads": 1, "head_dim": 64, "seq_len": 128, "q_len": 1, "dtype": "bf16"}]}
EOF
  main=(--backend=cpu --batch=2 --heads=2 --seq_len=64 --verify --max_time=0.05)
  tune_main=(--backend=cpu --batch=1 --heads=2 --seq_len=64 --max_time=0.05)
  run_opts=(--backend=cpu --max_time=0.05)
  tune_opts=(--backend=cpu --max_time=0.02)
else
  main=(--batch=32 --heads=12 --seq_len=512 --verify)            # the main job, exactly as the README runs it
  tune_main=(--batch=32 --heads=12 --seq_len=512)
  run_opts=(--max_time=0.5)
  tune_opts=(--max_time=0.2)
fi
out=docs/results

# The card: device 0's model as attnbench sees it ("NVIDIA H100 80GB HBM3" -> h100; other names lower case with
# "_" for anything but letters and digits: the card never holds "-", which separates it from the set's name).
card_of() {
  python3 -c '
import re, sys
name = sys.argv[1]
m = re.search(r"\b(G?[A-Z]{1,2}\d{2,4}[A-Z]?)\b", name.replace("NVIDIA", ""))
print(m.group(1).lower() if m else (re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "unknown"))' "$1"
}
device=$("$bin" list --json=- | python3 -c 'import json, sys; d = json.load(sys.stdin)["devices"]; print(d[0]["name"] if d else "")')
if [[ -z $device ]]; then
  [[ $smoke == 1 ]] || { echo "doc-results: attnbench sees no CUDA device (a GPU machine and a CUDA build are needed)" >&2; exit 2; }
  device=$("$bin" --backend=cpu --batch=1 --heads=1 --seq_len=8 --strategies=fused --max_time=0.01 --json=- -q 2>/dev/null |
           python3 -c 'import json, sys; print(json.load(sys.stdin)["device"]["name"])')
fi
card=$(card_of "$device")
echo "doc-results: $device -> $out/$card-*.json (attnbench $("$bin" --version | tail -1))"

t_all=$(date +%s)
limit=${DOC_RESULTS_STEP_TIMEOUT:-150}  # seconds a step may take (SIGTERM: a run writes what finished)
failed=()
step() {  # step NAME CMD...: run and print its wall time; a failure is recorded and the next step runs
  local name=$1; shift
  local t0=$(date +%s%N) rc=0
  echo "== $name: $*"
  "$@" || rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '== %s: rc=%d, %d.%01d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100))
  [[ $rc -eq 0 ]] || failed+=("$name (exit $rc)")
}
peers() {  # peers REPORT BACKENDS [FLAGS...]: PyTorch's SDPA rows merged into REPORT (stand-ins in the smoke run)
  if [[ $smoke == 1 ]]; then
    python3 - "$1" "$2" <<'PY'
import json, sys
path, backends = sys.argv[1], sys.argv[2].split(",")
d = json.load(open(path))
fused = [r for r in d["results"] if r["strategy"] == "fused" and r["status"] == "ok"]
for i, b in enumerate(backends):
    for r in fused:
        x = json.loads(json.dumps(r))
        x["strategy"] = "peer:torch-" + b
        x["time_ms"] = {k: (v * (0.9 + 0.1 * i) if k != "samples" and k != "noise" else v) for k, v in x["time_ms"].items()}
        x.pop("config", None)
        d["results"].append(x)
d.setdefault("peers", []).append({"tool": "peer_torch", "torch": "smoke stand-in", "command": "none", "created": d["created"],
                                  "settings": d["settings"]})
json.dump(d, open(path, "w"), indent=2)
PY
  else
    timeout "$limit" python3 "$root/scripts/peer_torch.py" --merge "$1" --backends="$2" "${@:3}" -q  # merges before a failure's exit 1
  fi
}

# The in-process peers this build made (docs/peers.md: cuDNN, FlashInfer), beside fused on every report.
inproc=$("$bin" list --json=- | python3 -c '
import json, sys
print(",".join("peer:" + p["name"] for p in json.load(sys.stdin).get("peers", []) if p.get("status") == "found"))')
peer_flags=()
[[ -n $inproc ]] && peer_flags=(--peers=all)
echo "doc-results: in-process peers: ${inproc:-none}"
suite_strategies=fused${inproc:+,$inproc}

rm -f "$out/$card-cache-default.json" "$out/$card-cache-tiles.json"  # a tune merges into an existing cache
# Four lanes of steps that share nothing (each writes its own report or, the tunes, one cache in turn). With
# DOC_RESULTS_GPUS (device indices, e.g. 0,1,2,3) each lane runs on one GPU of the list (CUDA_VISIBLE_DEVICES;
# lanes share a GPU round-robin when there are fewer), all at once: on a host of four identical GPUs the wall
# time is the longest lane's instead of the sum. Without it they run one after another on device 0.
lane_default() {
  step default timeout "$limit" "$bin" "${main[@]}" "${peer_flags[@]}" --json="$out/$card-default.json" --quiet
  # The README's sample shows every peer with its launches and error; the perf-notes tables only times.
  step default-peers peers "$out/$card-default.json" flash,cudnn,efficient,math,unfused --verify
}
lane_prefill() {
  step prefill timeout "$limit" "$bin" --config="$out/suites/prefill.json" "${peer_flags[@]}" --strategies="$suite_strategies" --verify "${run_opts[@]}" \
    --json="$out/$card-prefill.json" --quiet
  step prefill-peers peers "$out/$card-prefill.json" flash,cudnn --no-launches --max-time=0.5
}
lane_decode() {
  step decode timeout "$limit" "$bin" --config="$out/suites/decode.json" "${peer_flags[@]}" --strategies="$suite_strategies" --verify "${run_opts[@]}" \
    --json="$out/$card-decode.json" --quiet
  step decode-peers peers "$out/$card-decode.json" flash,cudnn,gqa-packed --no-launches --max-time=0.5
}
lane_tunes() {
  step tune-default timeout "$limit" "$bin" tune "${tune_main[@]}" --cache="$out/$card-cache-default.json" --md=- --quiet
  step tune-tiles-prefill timeout "$limit" "$bin" tune --config="$out/suites/prefill.json" --strategies=fused "${tune_opts[@]}" \
    --cache="$out/$card-cache-tiles.json" --md=- --quiet
  step tune-tiles-decode timeout "$limit" "$bin" tune --config="$out/suites/decode.json" --strategies=fused "${tune_opts[@]}" \
    --cache="$out/$card-cache-tiles.json" --md=- --quiet
}
lanes=(lane_default lane_prefill lane_decode lane_tunes)
if [[ -z ${DOC_RESULTS_GPUS:-} ]]; then
  for lane in "${lanes[@]}"; do "$lane"; done
else
  read -r -a gpu_ids <<<"${DOC_RESULTS_GPUS//,/ }"
  [[ ${#gpu_ids[@]} -ge 1 ]] || { echo "doc-results: DOC_RESULTS_GPUS names no device" >&2; exit 2; }
  lane_dir=$(mktemp -d "${TMPDIR:-/tmp}/doc-results-lanes.XXXXXX")
  pids=()
  for ((g = 0; g < ${#gpu_ids[@]} && g < ${#lanes[@]}; g++)); do
    (
      export CUDA_VISIBLE_DEVICES=${gpu_ids[g]}
      for ((i = g; i < ${#lanes[@]}; i += ${#gpu_ids[@]})); do "${lanes[i]}"; done
      for f in "${failed[@]+"${failed[@]}"}"; do echo "$f"; done >"$lane_dir/failed-$g"
    ) >"$lane_dir/lane-$g.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  for ((g = 0; g < ${#pids[@]}; g++)); do
    echo "-- lane on device ${gpu_ids[g]}:"
    cat "$lane_dir/lane-$g.log"
    if [[ -s $lane_dir/failed-$g ]]; then
      while IFS= read -r f; do failed+=("$f"); done <"$lane_dir/failed-$g"
    elif [[ ! -e $lane_dir/failed-$g ]]; then
      failed+=("the lane on device ${gpu_ids[g]} (it did not finish)")
    fi
  done
  rm -rf "$lane_dir"
fi
echo "doc-results: measured in $(( $(date +%s) - t_all )) s"

# Another card's files of the same set are stale now; the docs name this card's.
python3 - "$card" "${sets[@]}" <<'PY'
import glob, os, re, sys
card, sets = sys.argv[1], sys.argv[2:]
names = "|".join(re.escape(s) for s in sets)
cited = re.compile(r"docs/results/([a-z0-9_]+)-(" + names + r")\.json")
for path in ["README.md"] + sorted(glob.glob("docs/*.md")):
    text = open(path).read()
    new = cited.sub(lambda m: f"docs/results/{card}-{m.group(2)}.json", text)
    if new != text:
        open(path, "w").write(new)
        print(f"doc-results: {path} now names docs/results/{card}-*.json")
for f in sorted(glob.glob("docs/results/*.json")):
    m = re.fullmatch(r"([a-z0-9_]+)-(" + names + r")\.json", os.path.basename(f))
    if m and m.group(1) != card:
        os.remove(f)
        print(f"doc-results: removed {f} (another card's)")
PY

ATTNBENCH=$bin scripts/doc-samples.sh || failed+=("doc-samples (exit $?)")
if [[ $smoke == 1 ]]; then
  [[ ${#failed[@]} -gt 0 ]] || ATTNBENCH=$bin scripts/doc-samples.sh --check  # (reports a failed step left out fail it)
  echo "doc-results: smoke run done; the docs it rewrote are in $work"
fi
if [[ -n ${DOC_RESULTS_COPY_TO:-} ]]; then
  mkdir -p "$DOC_RESULTS_COPY_TO/docs"
  cp README.md "$DOC_RESULTS_COPY_TO/"
  cp docs/*.md "$DOC_RESULTS_COPY_TO/docs/"
  cp -r docs/results "$DOC_RESULTS_COPY_TO/docs/"
  echo "doc-results: copied README.md, docs/*.md and docs/results/ to $DOC_RESULTS_COPY_TO"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  printf 'doc-results: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "doc-results: done in $(( $(date +%s) - t_all )) s"
