#!/usr/bin/env bash
# The inference axes (kv_heads, q_len, kv_lens) through the real binary: every bad value is one line on stderr,
# exit code 2 and no report file; good ragged specs expand the same way twice and show their lengths; a run
# reports the measured copy bandwidth and each row's %copy; the model suites expand; peer_torch.py --dry-run
# plans the inference calls without torch. Usage: cli_inference_axes.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # $work (entered), expect_exit, ok, bad, finish

small=(--batch=1 --heads=4 --seq_len=16 --head_dim=8 --max_time=0.02 --min_samples=2)

# expect_refused NEEDLE ARGS... : `run` exits 2 with one stderr line containing NEEDLE and writes no report.
expect_refused() {
  local needle=$1
  shift
  rm -f out.json
  expect_exit 2 "$needle" "$bin" --backend=cpu --quiet --json=out.json "$@"
  [[ ! -e out.json ]] || bad "out.json written for: $*"
  [[ -z $(ls out.json.tmp.* 2>/dev/null) ]] || bad "temporary report left for: $*"
}

expect_refused "kv_heads" "${small[@]}" --heads=32 --kv_heads=5
expect_refused "kv_heads" "${small[@]}" --kv_heads=0
expect_refused "q_len" "${small[@]}" --q_len=0
expect_refused "q_len" "${small[@]}" --q_len=17
expect_refused "kv_lens" --batch=4 --heads=2 --head_dim=8 --kv_lens=list:1,2,3
expect_refused "kv_lens" --batch=2 --heads=2 --head_dim=8 --kv_lens=list:5,0
expect_refused "kv_lens" --batch=2 --heads=2 --head_dim=8 --kv_lens=uniform:9:3
expect_refused "kv_lens" --batch=2 --heads=2 --head_dim=8 --kv_lens=uniform:a:3
expect_refused "kv_lens" --batch=2 --heads=2 --head_dim=8 --kv_lens=file:/nonexistent/lengths.txt
printf '12\n# a comment\nseven\n40\n' >bad_lengths.txt
expect_refused "kv_lens" --batch=3 --heads=2 --head_dim=8 --kv_lens=file:bad_lengths.txt
expect_refused "seq_len" --batch=2 --heads=2 --head_dim=8 --kv_lens=list:7,9 --seq_len=64
# The same through a suite: kv_heads that do not divide heads.
cat >bad_suite.json <<'EOF'
{"name": "bad-gqa", "description": "kv_heads 5 of 32", "grids": [{"batch": 1, "heads": 32, "kv_heads": 5, "seq_len": 64, "head_dim": 64}]}
EOF
expect_refused "kv_heads" --config=bad_suite.json
expect_exit 2 "kv_heads" "$bin" grid --heads=32 --kv_heads=5

# Good input: a seeded uniform spec shows its lengths, the same on a second invocation.
grid_lens() {
  "$bin" grid --batch=4 --heads=8 --kv_heads=2 --head_dim=64 --q_len=1 --kv_lens=uniform:512:8192:7 --format=json |
    python3 -c 'import json,sys; p=json.load(sys.stdin); assert len(p)==1, p; print(p[0]["kv_lens"], p[0]["kv_lens_values"], p[0]["seq_len"], p[0]["q_len"], p[0]["kv_heads"])'
}
first=$(grid_lens) || bad "grid --kv_lens=uniform:512:8192:7"
second=$(grid_lens) || bad "grid --kv_lens=uniform:512:8192:7 (second)"
[[ -n $first && $first == "$second" ]] && ok || bad "uniform lengths differ between invocations: '$first' vs '$second'"
python3 - "$first" <<'EOF' && ok || bad "uniform lengths out of bounds: $first"
import sys
spec, rest = sys.argv[1].split(" ", 1)
lens = eval(rest.split("]")[0] + "]")
S, q, kvh = map(int, rest.split("]")[1].split())
assert spec == "uniform:512:8192:7" and len(lens) == 4 and all(512 <= x <= 8192 for x in lens) and S == max(lens)
assert q == 1 and kvh == 2
EOF

# A lengths file with comments and blank lines works, and the run records the lengths.
printf '# lengths from a trace\n\n37\n  \n100\n# done\n64\n' >lengths.txt
"$bin" --backend=cpu --quiet --batch=3 --heads=4 --kv_heads=2 --head_dim=8 --q_len=5 --causal --kv_lens=file:lengths.txt \
  --strategies=fused --max_time=0.02 --min_samples=2 --json=lens.json >/dev/null 2>stderr.txt && ok || { bad "run with a lengths file"; cat stderr.txt; }
python3 - <<'EOF' && ok || bad "the lengths file's report"
import json
d = json.load(open("lens.json"))
p = d["results"][0]["problem"]
assert p["kv_lens_values"] == [37, 100, 64], p
assert p["seq_len"] == 100 and p["q_len"] == 5 and p["kv_heads"] == 2, p
EOF

# Achieved bandwidth: the device info has the measured copy bandwidth, every timed row its fraction, and the
# console and markdown tables show %copy.
"$bin" --backend=cpu --batch=2 --heads=4 --kv_heads=1 --seq_len=300 --q_len=1 --head_dim=32 --strategies=fused \
  --max_time=0.02 --min_samples=2 --json=bw.json >console.txt 2>&1 && ok || { bad "decode run"; tail -3 console.txt; }
grep -q "%copy" console.txt && ok || bad "console table lacks %copy"
grep -q "copy [0-9]* GB/s" console.txt && ok || bad "device line lacks the copy bandwidth"
python3 - <<'EOF' && ok || bad "report JSON lacks copy_bandwidth_gbps / copy_fraction"
import json
d = json.load(open("bw.json"))
bw = d["device"]["copy_bandwidth_gbps"]
assert bw > 0, bw
for r in d["results"]:
    if r["status"] == "ok":
        assert abs(r["copy_fraction"] - r["gbps"] / bw) < 1e-9 * max(1, r["copy_fraction"]), r
EOF
"$bin" report bw.json --format=md >md.txt 2>&1 && grep -q "| %copy |" md.txt && ok || bad "markdown lacks %copy"
"$bin" report bw.json --format=csv >csv.txt 2>&1 && head -1 csv.txt | grep -q ",gbps,copy_fraction," && ok || bad "csv lacks copy_fraction"
# A report from before the field still reads and prints (no %copy: '-').
python3 - <<'EOF'
import json
d = json.load(open("bw.json"))
del d["device"]["copy_bandwidth_gbps"]
for r in d["results"]:
    r.pop("copy_fraction", None)
json.dump(d, open("old.json", "w"))
EOF
"$bin" report old.json >old.txt 2>&1 && grep -q "%copy" old.txt && ok || bad "an older report does not print"

# Every shipped suite expands through the binary; the model suites carry their GQA head counts.
for f in "$src"/configs/*.json; do
  "$bin" grid --config="$f" --format=json >suite.json 2>stderr.txt && ok || { bad "grid --config=$f"; cat stderr.txt; }
done
"$bin" grid --config=llama3.1-8b-decode --format=json |
  python3 -c 'import json,sys; p=json.load(sys.stdin); assert all(x["heads"]==32 and x["kv_heads"]==8 and x["q_len"]==1 for x in p)' &&
  ok || bad "llama3.1-8b-decode"
expect_exit 2 "paged-decode" "$bin" grid --config=paged-decode

# peer_torch.py plans the inference calls without torch.
export ATTNBENCH=$bin
python3 "$src/scripts/peer_torch.py" --dry-run --config=qwen2.5-7b-chunked-prefill >plan.txt 2>stderr.txt && ok ||
  { bad "peer_torch --dry-run"; cat stderr.txt; }
for needle in "enable_gqa=True" "attn_mask=bool" "bottom-right" "key-padding" "paged KV run contiguous" \
              "SDPBackend.MATH" "SDPBackend.CUDNN_ATTENTION"; do
  grep -qF -- "$needle" plan.txt && ok || bad "peer plan lacks '$needle'"
done
python3 "$src/scripts/peer_torch.py" --dry-run --config=falcon-7b-decode --json=peer.json -q && ok || bad "peer dry-run json"
python3 - <<'EOF' && ok || bad "peer dry-run rows"
import json
d = json.load(open("peer.json"))
names = {r["strategy"] for r in d["results"]}
assert {"peer:torch-flash", "peer:torch-math", "peer:torch-gqa-packed"} <= names, names
assert all(r["problem"]["kv_heads"] == 1 and r["problem"]["kv_layout"] == "contiguous" for r in d["results"])
assert any("contiguous K/V" in w for w in d["warnings"]), d["warnings"]
EOF
"$bin" report peer.json >/dev/null 2>stderr.txt && ok || { bad "attnbench report reads the peer rows"; cat stderr.txt; }
python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$src/scripts/peer_torch.py" && ok ||
  bad "peer_torch.py does not compile"

finish
