#!/usr/bin/env bash
# Docs that cannot go stale (issue 18): every generated block of README.md and docs/report-format.md equals what
# this binary prints for the stored report it names (scripts/doc-samples.sh --check), and every field a report
# of this binary writes, and every field of the stored GPU report, is named in docs/report-format.md.
# Run as: bash cli_doc_samples.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # enters a scratch folder
if ! command -v python3 >/dev/null; then echo "python3 not found: nothing to test here"; exit 0; fi

if ATTNBENCH=$bin "$src/scripts/doc-samples.sh" --check >diff.txt 2>&1; then ok; else bad "generated docs are stale:"; head -60 diff.txt; fi

# A fresh report with every optional section this binary writes on the CPU: verify, rounds, samples, a slowdown.
ATTNBENCH_INJECT_SLOWDOWN=fused=5% "$bin" --backend=cpu --batch=2 --heads=2 --kv_heads=1 --seq_len=33 --q_len=3 \
  --head_dim=32 --pages=2 --kv_layout=paged --verify --rounds=2 --samples --max_time=0.02 --min_samples=2 -q \
  --json=fresh.json >/dev/null 2>&1 || bad "the fresh CPU report"
python3 - "$src/docs/report-format.md" fresh.json "$src"/docs/results/h100-default.json <<'PY' || { bad "report fields undocumented"; false; }
import json, re, sys
doc = open(sys.argv[1]).read()
named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", doc)) | set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)":', doc))
named |= {part for n in list(named) for part in n.split(".")}
def keys(v, depth, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            if depth > 1 and k not in ("attrs", "problem"):  # cuBLASLt's own attributes; problem: the axis table's
                keys(x, depth - 1, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, depth, out)
    return out
missing = {}
for path in sys.argv[2:]:
    d = json.load(open(path))
    found = keys({k: v for k, v in d.items() if k != "results"}, 2, set()) | keys(d["results"], 4, set())
    lost = sorted(found - named)
    if lost:
        missing[path] = lost
if missing:
    sys.exit(f"fields written but not named in docs/report-format.md: {missing}")
PY
[[ $? -eq 0 ]] && ok
finish
