#!/usr/bin/env bash
# A strategy that breaks the device context (injected with ATTNBENCH_INJECT_FAULT) fails with the shape,
# the strategy and the error, while every other strategy of every problem still runs (in a fresh process
# where the context cannot be rebuilt), and the report is complete. Usage: cli_fault_isolation.sh ATTNBENCH SRC
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ATTNBENCH_INJECT_FAULT=head_batched "$bin" --backend=cpu --quiet --batch=1 --heads=2 --seq_len=32,48 --head_dim=16 \
  --verify --json=r.json >out.txt 2>err.txt
rc=$?
if [[ $rc -eq 1 ]] && python3 - r.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r["results"]
assert len(rows) == 2 * 5, len(rows)
for x in rows:
    if x["strategy"] == "head_batched":
        assert x["status"] == "failed", x
        assert "injected sticky fault" in x["reason"] and "S=%d" % x["problem"]["seq_len"] in x["reason"], x["reason"]
    else:
        assert x["status"] == "ok" and x["verify"]["passed"], x
assert any("fresh process" in w for w in r["warnings"]), r["warnings"]
PY
then echo "1 passed, 0 failed"; exit 0
else echo "rc=$rc"; cat err.txt; echo "0 passed, 1 failed"; exit 1
fi
