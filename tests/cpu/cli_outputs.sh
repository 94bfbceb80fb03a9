#!/usr/bin/env bash
# Issue 18: run/tune write --json/--md/--csv to files or '-' (stdout), every report before anything is printed,
# the CSV carries every column, `report --format=json|md|csv`, `list` and `list --format=json`, --profile.
# Run as: bash cli_outputs.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # enters a scratch folder
if ! command -v python3 >/dev/null; then echo "python3 not found: nothing to test here"; exit 0; fi
py() { python3 -c "$@"; }
small=(--backend=cpu --batch=1 --heads=4 --kv_heads=2 --seq_len=37 --q_len=5 --head_dim=32 --pages=3 --causal
       --max_time=0.02 --min_samples=3 --verify)

# --json=- puts the whole report on stdout and nothing else there; the files are written too.
"$bin" "${small[@]}" --json=- --md=r.md --csv=r.csv >out.json 2>err.txt; rc=$?
[[ $rc -eq 0 ]] || bad "run --json=-: exit $rc"
py "import json; d=json.load(open('out.json')); assert d['schema']=='attnbench.report/1' and len(d['results'])==5" \
  || bad "stdout of --json=- is not the report alone"
grep -q "^### attnbench on" r.md || bad "--md file"
grep -q "median ms" err.txt && bad "the table went to stderr"
# The CSV: one line per row, every line as many fields as the header, the table's and report's columns there.
py "
import csv, json
rows = list(csv.reader(open('r.csv')))
head = rows[0]
assert len(rows) == 6, len(rows)
assert all(len(r) == len(head) for r in rows), 'ragged CSV'
need = ['strategy','status','median_ms','noise','tflops','gbps','copy_fraction','launches_expected','launches_measured',
        'rel_l2_err','timer','stop_reason','noise_met','rounds','host_median_ms','tile','tile_source','config_source',
        'gemm_algos','launch_formula','kernel_names','kv_heads','q_len','kv_lens','max_abs_err','tolerance']
missing = [c for c in need if c not in head]
assert not missing, missing
d = {r[head.index('strategy')]: dict(zip(head, r)) for r in rows[1:]}
rep = json.load(open('out.json'))
fused = d['fused']
assert fused['tile'] and fused['timer'] == 'events' and float(fused['host_median_ms']) > 0, fused
assert d['nested']['gemm_algos'] and d['nested']['q_len'] == '5' and d['nested']['kv_heads'] == '2', d['nested']
for r in rep['results']:
    assert abs(float(d[r['strategy']]['median_ms']) - r['time_ms']['median']) <= 1e-9 * r['time_ms']['median']
" || bad "CSV columns"

# Every format to stdout in turn; two to stdout at once is refused before any work, nothing written.
for f in md csv; do
  "$bin" "${small[@]}" --$f=- >o.txt 2>/dev/null || bad "--$f=- exit"
done
"$bin" "${small[@]}" --md=- >o.txt 2>/dev/null; grep -q "^| problem" o.txt || bad "--md=- table"
grep -q "median ms  " o.txt && bad "--md=- also printed the console table"
expect_exit 2 "only one output can go to stdout" "$bin" "${small[@]}" --json=- --csv=- --md=n.md
[[ -e n.md ]] && bad "a refused run wrote --md"
expect_exit 2 "both write" "$bin" "${small[@]}" --json=same --csv=same
expect_exit 2 "cannot write" "$bin" "${small[@]}" --csv=/nonexistent-dir/x.csv
[[ -e ./- ]] && bad "a file named '-' was created"

# The report is written before the table: a reader that stops after 3 lines still leaves it whole.
rm -f h.json
"$bin" "${small[@]}" --json=h.json 2>/dev/null | head -3 >/dev/null
py "import json; assert len(json.load(open('h.json'))['results']) == 5" || bad "| head -3 lost the report"

# report --format=json|md|csv over the stored report; the CSV equals the run's own.
"$bin" report out.json --format=csv >c2.csv || bad "report --format=csv"
cmp -s c2.csv r.csv || bad "report --format=csv differs from run --csv"
"$bin" report out.json --format=json | py "
import json, sys
d = json.load(sys.stdin)
r = [x for x in d['rows'] if x['strategy'] == 'fused'][0]
assert r['tile'] and r['timer'] == 'events' and r['host_median_ms'] > 0 and r['stop_reason'], r
" || bad "report --format=json lacks the extra columns"
"$bin" report out.json --format=md | grep -q "^| problem" || bad "report --format=md"

# tune: the summary to stdout as JSON, CSV to a file; the cache still written; the text summary off stdout.
"$bin" tune --backend=cpu --batch=1 --heads=2 --seq_len=40 --head_dim=32 --strategies=fused,head_batched \
  --max_time=0.02 --min_samples=2 --cache=c.json --json=- --csv=t.csv -q >t.json 2>t.err || bad "tune --json=-"
py "
import json, csv
d = json.load(open('t.json'))
assert d['schema'] == 'attnbench.tune-summary/1', d['schema']
kinds = sorted({r['kind'] for r in d['rows']})
assert kinds == ['fused', 'gemm'], kinds
assert all(r['candidates'] >= r['ok'] >= 1 and r['best_ms'] > 0 for r in d['rows']), d['rows']
rows = list(csv.reader(open('t.csv')))
assert len(rows) == len(d['rows']) + 1 and rows[0][0] == 'kind'
assert json.load(open('c.json'))['schema'] == 'attnbench.cache/1'
" || bad "tune outputs"
grep -q "wrote .* entries" t.err || bad "tune: the cache line left stderr"
expect_exit 2 "only one output" "$bin" tune --backend=cpu --dry_run --json=- --md=-

# list: every section, and the same as JSON.
"$bin" list >l.txt || bad "list"
for s in "strategies" "backends:" "devices:" "timers (--timer):" "fused tiles (--tile" "suites (--config=NAME):" "plugins (--plugin=PATH):"; do
  grep -qF "$s" l.txt || bad "list lacks '$s'"
done
grep -q "^  ci  *" l.txt || bad "list lacks the ci suite"
"$bin" list --format=json | py "
import json, sys, os
d = json.load(sys.stdin)
assert d['schema'] == 'attnbench.list/1'
assert {s['name'] for s in d['strategies']} == {'nested','head_batched','fully_batched','ptr_array','fused'}
assert [t['name'] for t in d['timers']] == ['events','graph','cupti']
tiles = d['fused_tiles']
assert tiles and all(t['head_dims_fp16'] for t in tiles), tiles
names = {s['name']: s for s in d['suites']}
want = sorted(f[:-5] for f in os.listdir(sys.argv[1] + '/configs') if f.endswith('.json'))
assert sorted(names) == want, (sorted(names), want)
assert names['ci']['description'], names['ci']
assert d['plugins'] == []
" "$src" || bad "list --format=json"
expect_exit 2 "--format" "$bin" list --format=yaml
expect_exit 2 "attnbench list" "$bin" --backend=cpu --tile=m1n2
# Every prefill tile list shows runs at a head_dim list gives it, on the backend list names.
"$bin" list --format=json | py "
import json, sys
for t in json.load(sys.stdin)['fused_tiles']:
    if t['kind'] == 'prefill': print(t['backend'], t['name'], t['head_dims_fp16'][-1])" >tiles.txt
[[ -s tiles.txt ]] || bad "list shows no prefill tile"
while read -r backend tile d; do
  "$bin" --backend="$backend" --batch=1 --heads=1 --seq_len=70 --head_dim="$d" --strategies=fused --tile="$tile" \
    --max_time=0.01 --min_samples=1 --verify -q >/dev/null 2>&1 || bad "listed tile $tile (D=$d) does not run on $backend"
done <tiles.txt

# --profile: every row ok and untimed (one forward each), the report says so; timing flags beside it refused.
"$bin" "${small[@]}" --profile --json=p.json >p.txt 2>&1 || bad "--profile exit"
py "
import json
d = json.load(open('p.json'))
assert d['settings']['profile'] is True
assert all(r['status'] == 'ok' and 'time_ms' not in r and r['verify']['passed'] for r in d['results']), d['results']
" || bad "--profile rows"
grep -q "profiling mode" p.txt || bad "--profile: the table's header does not say profiling mode"
expect_exit 2 "--rounds" "$bin" "${small[@]}" --profile --rounds=3
expect_exit 2 "--samples" "$bin" "${small[@]}" --profile --samples
finish
