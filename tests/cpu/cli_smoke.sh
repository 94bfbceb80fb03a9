#!/usr/bin/env bash
# The binary's basic surface: --help, --version, list, the CPU notice under --backend=auto without a GPU,
# a verified grid run whose JSON report is complete, and a run from a suite file.
# Usage: cli_smoke.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0
fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }

"$bin" --help >help.txt 2>&1
check "help lists flags" "grep -q -- '--seq_len' help.txt && grep -q -- '--kv_layout' help.txt"
"$bin" --version >version.txt 2>&1
check "version" "grep -q '^attnbench [0-9]' version.txt"
"$bin" list >list.txt 2>&1
check "list shows strategies and backends" "grep -q ptr_array list.txt && grep -q fully_batched list.txt && grep -q '^backends' list.txt && grep -q '^devices' list.txt"

if [[ $("$bin" list | grep -c 'cuda:') -eq 0 ]]; then
  "$bin" --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused >out.txt 2>err.txt
  check "auto falls back to cpu with one notice" "[[ \$(grep -c 'CPU reference backend' err.txt) -eq 1 ]] && grep -q 'not GPU times' err.txt"
fi

"$bin" --backend=cpu --quiet --batch=1,2 --heads=2 --seq_len=24:48:*2 --head_dim=16 --pages=3 --kv_layout=paged --causal --verify --json=r.json >table.txt 2>err.txt
rc=$?
check "grid run exits 0" "[[ $rc -eq 0 ]]"
check "console table names every strategy" "grep -q nested table.txt && grep -q ptr_array table.txt && grep -q fused table.txt"
check "report is complete and verified" "python3 - r.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r['schema'] == 'attnbench.report/1'
assert r['device']['backend'] == 'cpu'
assert len(r['results']) == 2 * 2 * 5, len(r['results'])
for x in r['results']:
    assert x['status'] == 'ok', x
    assert x['verify']['passed'] and x['verify']['rel_l2_err'] < 5e-3
    assert x['launches']['match'], x['launches']
    assert x['time_ms']['samples'] >= 1 and x['time_ms']['median'] > 0
    assert x['problem']['kv_layout'] == 'paged' and x['problem']['causal']
PY"

"$bin" --backend=cpu --quiet --config="$src/tests/data/small-suite.json" --strategies=head_batched,fused --verify --json=ci.json >/dev/null 2>err.txt
rc=$?
check "a suite runs" "[[ $rc -eq 0 ]] && python3 -c \"import json; r=json.load(open('ci.json')); assert len(r['results'])>=2*9\""

# A command line that is not UTF-8 (here the report path) is recorded with replacement characters, and the
# report is still written whole.
odd="r$(printf '\xe9').json"
"$bin" --backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --json="$odd" >/dev/null 2>err.txt
rc=$?
check "non-UTF-8 argument still gives a report" "[[ $rc -eq 0 ]] && python3 -c \"import json,sys; json.load(open(sys.argv[1], 'rb'))\" \"\$odd\" && [[ -z \$(ls ./*.tmp.* 2>/dev/null) ]]"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
