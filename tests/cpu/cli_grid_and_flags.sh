#!/usr/bin/env bash
# The grid subcommand and the shared run/tune flags through the real binary: the expanded grid as text and
# JSON (labels, keys and suites from the one axis table), and every flag that conflicts with another or
# cannot take effect refused with one line and exit 2. Usage: cli_grid_and_flags.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
tiny=(--backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --warmup=0)
small=("${tiny[@]}" --max_samples=1)

# grid: text is one label a line, in the run's order; json carries the problem fields, label and key.
"$bin" grid --batch=1,2 --heads=1 --seq_len=16:32:*2 --head_dim=8 --causal >out.txt 2>err.txt || bad "grid text failed"
[[ $(cat out.txt) == $'B=1 H=1 S=16 D=8 P=1 contiguous fp16 causal\nB=1 H=1 S=32 D=8 P=1 contiguous fp16 causal\nB=2 H=1 S=16 D=8 P=1 contiguous fp16 causal\nB=2 H=1 S=32 D=8 P=1 contiguous fp16 causal' ]] &&
  ok || bad "grid text: $(cat out.txt)"
"$bin" grid --batch=1 --heads=2 --seq_len=100 --head_dim=8 --page_size=16 --kv_layout=paged --dtype=fp16,bf16 \
  --causal=false,true --format=json >grid.json 2>err.txt || bad "grid json failed"
python3 - grid.json <<'PY' && ok || bad "grid json content"
import json, sys
g = json.load(open(sys.argv[1]))
assert len(g) == 4, len(g)
p = g[0]
assert p["label"] == "B=1 H=2 S=100 D=8 P=7 ps=16 paged fp16", p["label"]
assert p["pages"] == 7 and p["page_size"] == 16 and p["pages_requested"] == 7 and p["causal"] is False
assert json.loads(p["key"]) == {k: v for k, v in p.items() if k not in ("label", "key", "pages_requested")}
assert [x["dtype"] for x in g] == ["fp16", "fp16", "bf16", "bf16"] and [x["causal"] for x in g] == [False, True] * 2
PY
# The grid of a suite is exactly the problems a run of it measures.
"$bin" grid --config="$2/tests/data/tiny-suite.json" --format=json >suite.json 2>err.txt || bad "grid --config failed"
"$bin" --backend=cpu --quiet --config="$2/tests/data/tiny-suite.json" --strategies=fused --max_samples=1 --warmup=0 \
  --json=run.json >/dev/null 2>&1 || bad "run of the tiny suite failed"
python3 - suite.json run.json <<'PY' && ok || bad "grid --config differs from the run's problems"
import json, sys
g = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))["results"]
assert [{k: v for k, v in p.items() if k not in ("label", "key")} for p in g] == [row["problem"] for row in r]
PY
"$bin" grid >out.txt 2>&1 && [[ $(cat out.txt) == "B=32 H=12 S=512 D=64 P=1 contiguous fp16" ]] && ok || bad "grid defaults: $(cat out.txt)"
expect_exit 2 "--batch: 'x' is not a number" "$bin" grid --batch=x
expect_exit 2 "--format" "$bin" grid --format=yaml
expect_exit 2 "cannot open" "$bin" grid --config=no_such_suite.json

# Conflicting flags: one line, exit 2, for run, tune and grid alike.
for cmd in run tune grid; do
  extra=()
  [[ $cmd == tune ]] && extra=(--cache=c.json)
  [[ $cmd == grid ]] || extra+=(--backend=cpu --quiet)
  expect_exit 2 "--config excludes --batch" "$bin" $cmd --config=ci --batch=4 "${extra[@]}"
  expect_exit 2 "--config excludes --causal" "$bin" $cmd --config=ci --causal "${extra[@]}"
  expect_exit 2 "excludes" "$bin" $cmd --batch=1 --seq_len=16 --pages=2 --page_size=8 "${extra[@]}"
done
# Flags that cannot take effect on the CPU backend.
expect_exit 2 "--timer=graph: the CPU backend has no CUDA graphs" "$bin" "${small[@]}" --timer=graph
expect_exit 2 "--timer=cupti: the CPU backend has no CUPTI" "$bin" "${small[@]}" --timer=cupti
expect_exit 2 "--timer=graph: the CPU backend" "$bin" tune "${tiny[@]}" --timer=graph --cache=c.json
expect_exit 2 "--device=3: the CPU backend has only device 0" "$bin" "${small[@]}" --device=3
expect_exit 2 "--device=1: the CPU backend has only device 0" "$bin" tune "${tiny[@]}" --device=1 --cache=c.json
# A fused tile without the fused strategy would be ignored: refused.
expect_exit 2 "--tile=m64n64w4s2: only the fused strategy takes a tile" "$bin" "${small[@]}" --strategies=head_batched --tile=m64n64w4s2
# CLI11 validators keep the one-line errors.
expect_exit 2 "--scores" "$bin" "${small[@]}" --scores=fp64
expect_exit 2 "--search" "$bin" tune "${tiny[@]}" --search=random --cache=c.json
expect_exit 2 "--timer" "$bin" tune "${tiny[@]}" --timer=sundial --cache=c.json
expect_exit 2 "--device: must be 0 or more, got -1" "$bin" "${small[@]}" --device=-1
expect_exit 2 "--max_memory: unknown unit in '8XB'" "$bin" "${small[@]}" --max_memory=8XB
# --hot cannot change a CPU run (no L2 flush there): the run goes on and says so.
"$bin" "${small[@]}" --hot >out.txt 2>err.txt && grep -q "note: --hot: the CPU backend has no L2 flush" err.txt && ok ||
  bad "--hot on the CPU backend: $(cat err.txt)"
# --causal alone is still "true", --causal=false still false; a list runs both.
"$bin" grid --batch=1 --seq_len=16 --head_dim=8 --causal=false >out.txt 2>&1 && ! grep -q causal out.txt && ok || bad "--causal=false"
"$bin" grid --batch=1 --seq_len=16 --head_dim=8 --causal=false,true >out.txt 2>&1 && [[ $(grep -c . out.txt) == 2 ]] && ok ||
  bad "--causal=false,true: $(cat out.txt)"
finish
