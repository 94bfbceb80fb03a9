#!/usr/bin/env bash
# --devices (issue 17, point 1) with the real binary on the CPU backend, where each index is a worker process:
# rows from every worker, the same rows (and the same verify errors: the same inputs) as a one-process run,
# in grid order, each carrying its device, the header listing every device; a worker killed mid-run costs
# only its problem (failed, with the reason) while the rest complete; a sticky device fault resumes in a
# fresh worker as a one-process run does; different models refused unless --mixed_devices; a tune over
# three workers gives the cache one process gives. Usage: cli_devices.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
export TMPDIR=$work/tmp  # the pools' private directories, checked below to be gone
mkdir -p "$TMPDIR"
grid=(--backend=cpu --batch=1,2 --heads=2 --kv_heads=1 --seq_len=17,40 --head_dim=8 --causal=false,true
      --warmup=0 --min_samples=1 --max_time=0.01 --verify)

# Report checks: same.py ONE OTHER [KILLED_PROBLEM] compares the rows of two reports.
cat >same.py <<'PY'
import json, sys
one, other = (json.load(open(p)) for p in sys.argv[1:3])
killed = int(sys.argv[3]) if len(sys.argv) > 3 else -1
devices = sorted(d["index"] for d in other["devices"])
key = lambda r: (json.dumps(r["problem"], sort_keys=True), r["strategy"])
a, b = one["results"], other["results"]
assert [key(r) for r in a] == [key(r) for r in b], "rows or their order differ"
problems = []
for r in b:
    k = json.dumps(r["problem"], sort_keys=True)
    if k not in problems: problems.append(k)
used = set()
for x, y in zip(a, b):
    assert y["device"] in devices, (y["device"], devices)
    used.add(y["device"])
    if problems.index(json.dumps(y["problem"], sort_keys=True)) == killed:
        assert y["status"] == "failed", y
        assert "died while running it" in y["reason"] and "signal 9" in y["reason"], y["reason"]
        continue
    assert x["status"] == y["status"] == "ok", (x["status"], y["status"], y.get("reason"))
    assert x["verify"]["max_abs_err"] == y["verify"]["max_abs_err"], (x["verify"], y["verify"])
assert used == set(devices), ("rows from", used, "devices", devices)
print("ok", len(b), "rows from devices", sorted(used))
PY

"$bin" "${grid[@]}" --quiet --json=one.json >one.txt 2>&1 || bad "one-process run: $(tail -3 one.txt)"
python3 -c "import json; r=json.load(open('one.json')); assert [d['index'] for d in r['devices']]==[0] and all(x['device']==0 for x in r['results'])" \
  && ok || bad "a one-process run records device 0"

# Three workers: the same rows, each problem on one of them, the progress line counting per device.
"$bin" "${grid[@]}" --devices=0,1,2 --json=three.json >three.txt 2>three.err
rc=$?
if [[ $rc -eq 0 ]] && python3 same.py one.json three.json; then ok; else bad "three workers (rc=$rc): $(tail -3 three.err)"; fi
grep -q "device 0: .*device 1: .*device 2: " three.err && ok || bad "progress line per device: $(tail -2 three.err)"
grep -q "\[8/8\] done" three.err && ok || bad "progress reaches 8/8"
grep -q "fused" three.txt && ok || bad "the table is printed"

# A worker killed on problem 3: that problem's rows fail with the reason, every other row completes.
ATTNBENCH_INJECT_WORKER_KILL=3 "$bin" "${grid[@]}" --quiet --devices=0,1 --json=killed.json >killed.txt 2>&1
rc=$?
if [[ $rc -eq 1 ]] && python3 same.py one.json killed.json 3; then ok; else bad "killed worker (rc=$rc): $(tail -3 killed.txt)"; fi

# A sticky fault breaking the context: the rest of the problem resumes in a fresh worker, as in one process.
ATTNBENCH_INJECT_FAULT=head_batched "$bin" "${grid[@]}" --quiet --json=fault1.json >/dev/null 2>&1
ATTNBENCH_INJECT_FAULT=head_batched "$bin" "${grid[@]}" --quiet --devices=3,5 --json=fault2.json >fault.txt 2>&1
rc=$?
if [[ $rc -eq 1 ]] && python3 - fault1.json fault2.json <<'PY'
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:3])
st = lambda rows: [(r["strategy"], r["status"]) for r in rows]
assert st(a) == st(b), (st(a), st(b))
assert sum(r["status"] == "failed" for r in b) == 8 and {r["device"] for r in b} <= {3, 5}
PY
then ok; else bad "sticky fault with two workers (rc=$rc): $(tail -3 fault.txt)"; fi

# Different models: refused with one line and no report; allowed (and said) with --mixed_devices.
ATTNBENCH_INJECT_DEVICE_MODEL=1:another-cpu expect_exit 2 "different models (0: " "$bin" "${grid[@]}" --devices=0,1 --json=mixed.json
[[ ! -e mixed.json ]] && ok || bad "a refused mixed run left a report"
ATTNBENCH_INJECT_DEVICE_MODEL=1:another-cpu "$bin" "${grid[@]}" --quiet --devices=0,1 --mixed_devices --json=mixed.json >/dev/null 2>&1 \
  && python3 -c "import json; r=json.load(open('mixed.json')); assert any('different GPU models' in w for w in r['warnings'])" \
  && ok || bad "--mixed_devices runs and warns"

# Bad input: one line, exit 2, nothing written.
expect_exit 2 "--devices: device 1 is named twice" "$bin" "${grid[@]}" --devices=1,1 --json=bad.json
expect_exit 2 "--devices: 'x'" "$bin" "${grid[@]}" --devices=0,x --json=bad.json
expect_exit 2 "--device and --devices" "$bin" "${grid[@]}" --device=0 --devices=0,1 --json=bad.json
expect_exit 2 "--head_dim" "$bin" "${grid[@]}" --head_dim=0 --devices=0,1 --json=bad.json
expect_exit 2 "--timer=graph" "$bin" "${grid[@]}" --timer=graph --devices=0,1 --json=bad.json
[[ ! -e bad.json ]] && ok || bad "bad input left a report"

# tune over three workers: one cache with the entries a one-process tune finds.
tune=(tune --backend=cpu --quiet --batch=1 --heads=1 --seq_len=16,24,40 --head_dim=8 --strategies=fused,head_batched
      --warmup=0 --min_samples=1 --max_time=0.02)
"$bin" "${tune[@]}" --cache=c1.json >t1.txt 2>&1 || bad "one-process tune: $(tail -2 t1.txt)"
"$bin" "${tune[@]}" --devices=0,1,2 --cache=c3.json >t3.txt 2>&1 || bad "three-worker tune: $(tail -2 t3.txt)"
keys() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sorted(k+' '+e['key'] for k in ('gemm','fused') for e in d[k]))" "$1"; }
[[ -s c3.json && "$(keys c1.json)" == "$(keys c3.json)" ]] && ok || bad "tune caches differ: $(keys c1.json) vs $(keys c3.json 2>&1)"
grep -q "from 3 device(s)" t3.txt && grep -q "device 2:" t3.txt && ok || bad "tune summary: $(cat t3.txt)"
[[ -z "$(ls "$TMPDIR")" ]] && ok || bad "a pool directory was left: $(ls "$TMPDIR")"
finish
