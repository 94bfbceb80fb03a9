#!/usr/bin/env bash
# Plugins (include/attnbench/plugin.h) driven through the real binary: the CPU example plugin's rows are
# verified over awkward shapes (GQA/MQA, paged with a short last page, ragged, causal with q_len < S, B=1,
# H=1, fp16 and bf16); the deliberately broken plugins (tests/plugins) each cost only their own row, which
# says failed with the reason (crash, error return, out-of-bounds write, hang) or incorrect (wrong answer),
# while the built-in strategies are still verified; a plugin built for another ABI is refused with one line;
# a suite's "plugins" are loaded; tune searches the plugin's configurations into the cache and a run with
# the cache uses it; a library broken while it is loaded (a crash in attnbench_plugin(), abort(), exit(0) or a
# hang in its constructor, num_configs past its array, a configuration name with a line break) is one line and
# exit code 2 for run, tune and list, with nothing run or written. Usage: cli_plugins.sh ATTNBENCH SRC
set -u
bin=$1
plugins=$(cd "$(dirname "$bin")" && pwd)/plugins
source "$2/tests/cpu/expect_lib.sh"
cpu_plugin=$plugins/libcpu_example_plugin.so

# 1. The CPU example plugin beside fused over awkward shapes, every row verified.
"$bin" --backend=cpu --quiet --plugin="$cpu_plugin" --strategies=fused,plugin:cpu-example --batch=3 --heads=4 \
  --kv_heads=1,2 --seq_len=37 --q_len=5 --head_dim=16 --page_size=8 --kv_layout=paged,contiguous --causal=false,true \
  --dtype=fp16,bf16 --verify --min_samples=1 --warmup=0 --max_time=0.01 --json=a.json >out.txt 2>err.txt
rc=$?
if [[ $rc -eq 0 ]] && python3 - a.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
plug = [x for x in rows if x["strategy"] == "plugin:cpu-example"]
assert len(plug) == 16 and len(rows) == 32, (len(plug), len(rows))
for x in plug:
    assert x["status"] == "ok" and x["verify"]["passed"], x
    assert x["config"]["plugin_config"] == "keys64", x["config"]
PY
then ok; else bad "cpu plugin over the awkward grid (rc=$rc)"; head -c 3000 err.txt; fi

# `list --plugin` shows the loaded plugin with its strategy name and configurations, as text and JSON.
"$bin" list --plugin="$cpu_plugin" >list.txt 2>err.txt && "$bin" list --format=json --plugin="$cpu_plugin" >list.json 2>>err.txt
rc=$?
if [[ $rc -eq 0 ]] && grep -q "plugin:cpu-example .*libcpu_example_plugin.so .*configs: keys64" list.txt && python3 -c "
import json; p = json.load(open('list.json'))['plugins']
assert len(p) == 1 and p[0]['strategy'] == 'plugin:cpu-example' and p[0]['configs'][0] == 'keys64', p" 2>>err.txt
then ok; else bad "list --plugin (rc=$rc)"; cat list.txt err.txt | head -40; fi

# Ragged lengths and H=1 with one KV head.
"$bin" --backend=cpu --quiet --plugin="$cpu_plugin" --strategies=plugin:cpu-example --batch=3 --heads=1 \
  --kv_lens=list:9,33,20 --q_len=3 --head_dim=32 --page_size=16 --kv_layout=paged,contiguous --causal=false,true \
  --verify --min_samples=1 --warmup=0 --max_time=0.01 --json=r.json >out.txt 2>err.txt
rc=$?
if [[ $rc -eq 0 ]] && python3 -c "
import json; rows = json.load(open('r.json'))['results']
assert len(rows) == 4 and all(x['status'] == 'ok' and x['verify']['passed'] for x in rows), rows" 2>>err.txt
then ok; else bad "cpu plugin on ragged lengths (rc=$rc)"; head -c 3000 err.txt; fi

# 2. The broken plugins: each row failed or incorrect with its reason; the built-ins and the good plugin go on.
args=(--backend=cpu --quiet --batch=1 --heads=2 --seq_len=24 --head_dim=16 --verify --min_samples=1 --warmup=0
      --max_time=0.01 --plugin_timeout=3 --plugin="$cpu_plugin")
for m in crash error oob hang wrong; do args+=(--plugin="$plugins/libbroken_$m.so"); done
start=$(date +%s)
# Under AddressSanitizer (scripts/sanitize.sh) the crashing plugin's SIGSEGV would be caught by ASan's handler and
# turned into an exit status; with handle_segv=0 the child dies by the signal, as it does outside the sanitizer.
ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}handle_segv=0" "$bin" "${args[@]}" --json=b.json >out.txt 2>err.txt
rc=$?
took=$(( $(date +%s) - start ))
if [[ $rc -eq 1 && $took -lt 30 ]] && python3 - b.json <<'PY'
import json, sys
rows = {x["strategy"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert len(rows) == 11, sorted(rows)
for s in ["nested", "head_batched", "fully_batched", "ptr_array", "fused", "plugin:cpu-example"]:
    assert rows[s]["status"] == "ok" and rows[s]["verify"]["passed"], rows[s]
def want(s, status, *needles):
    x = rows[s]
    assert x["status"] == status, x
    for n in needles: assert n in x["reason"], (n, x["reason"])
want("plugin:broken-crash", "failed", "crashed", "SIGSEGV")
want("plugin:broken-error", "failed", "plugin forward failed: simulated launch failure")
want("plugin:broken-oob", "failed", "out-of-bounds write", "after the end of O")
want("plugin:broken-hang", "failed", "timed out", "--plugin_timeout=3")
want("plugin:broken-wrong", "incorrect", "rel L2 error")
PY
then ok; else bad "broken plugins (rc=$rc, ${took}s)"; head -c 3000 err.txt; python3 -m json.tool b.json | grep -E '"(strategy|status|reason)"'; fi
# The table shows every row.
"$bin" report b.json >table.txt 2>err.txt && grep -q "plugin:broken-hang" table.txt && grep -q "plugin:cpu-example" table.txt \
  && ok || bad "report table of plugin rows"

# 3. Loading: another ABI version, a missing file, a library that is not a plugin, a name loaded twice.
expect_exit 2 "built for plugin ABI version 999, this attnbench takes version 1" \
  "$bin" --backend=cpu --plugin="$plugins/libbroken_abi.so"
expect_exit 2 "--plugin=nowhere.so: no such file" "$bin" --backend=cpu --plugin=nowhere.so
libm=$(python3 -c "import ctypes.util, sys; print(ctypes.util.find_library('m') or '')")
libm_path=$(ldconfig -p | awk -v n="$libm" '$1 == n {print $NF; exit}')
[[ -n "$libm_path" ]] && expect_exit 2 "does not export attnbench_plugin()" "$bin" --backend=cpu --plugin="$libm_path"
cp "$cpu_plugin" copy.so
expect_exit 2 "a plugin named 'cpu-example' is already loaded" "$bin" --backend=cpu --plugin="$cpu_plugin" --plugin=copy.so
expect_exit 2 "unknown strategy 'plugin:nope'" "$bin" --backend=cpu --plugin="$cpu_plugin" --strategies=plugin:nope

# 4. A suite's "plugins" (relative to the suite file).
mkdir -p suite && cp "$cpu_plugin" suite/mine.so
cat >suite/s.json <<'JSON'
{"name": "plugin-suite", "plugins": ["mine.so"], "grids": [{"batch": 1, "heads": 2, "seq_len": 20, "head_dim": 16}]}
JSON
"$bin" --backend=cpu --quiet --config=suite/s.json --strategies=plugin:cpu-example --verify --min_samples=1 --warmup=0 \
  --max_time=0.01 --json=s.json >out.txt 2>err.txt
rc=$?
[[ $rc -eq 0 ]] && python3 -c "
import json; rows = json.load(open('s.json'))['results']
assert [x['strategy'] for x in rows] == ['plugin:cpu-example'] and rows[0]['verify']['passed']" && ok \
  || { bad "suite plugins (rc=$rc)"; cat err.txt; }

# 5. tune searches the plugin's configurations (each a child process) into the cache; a run with it uses it.
"$bin" tune --backend=cpu --quiet --plugin="$cpu_plugin" --strategies=plugin:cpu-example --batch=1 --heads=2 \
  --seq_len=64 --head_dim=16 --cache=c.json --min_samples=2 --warmup=0 --max_time=0.05 >out.txt 2>err.txt
rc=$?
config=$(python3 -c "
import json; e = json.load(open('c.json'))['plugins']
assert len(e) == 1 and e[0]['strategy'] == 'plugin:cpu-example' and e[0]['candidates'] == 3 and e[0]['failed'] == 0, e
assert e[0]['config'] in ('keys64', 'keys16', 'keys256') and e[0]['best_ms'] > 0, e
print(e[0]['config'])" 2>>err.txt)
if [[ $rc -eq 0 && -n "$config" ]]; then ok; else bad "tune over plugin configurations (rc=$rc)"; cat out.txt err.txt; fi
"$bin" --backend=cpu --quiet --plugin="$cpu_plugin" --strategies=plugin:cpu-example --batch=1 --heads=2 --seq_len=64 \
  --head_dim=16 --cache=c.json --verify --min_samples=1 --warmup=0 --max_time=0.01 --json=t.json >out.txt 2>err.txt
rc=$?
[[ $rc -eq 0 ]] && python3 -c "
import json; x = json.load(open('t.json'))['results'][0]
assert x['config']['plugin_config'] == '$config' and x['config']['source'] == 'cache' and x['verify']['passed'], x['config']" \
  && ok || { bad "run with the tuned plugin configuration (rc=$rc)"; cat err.txt; }
# --plugin_config picks one; a name no selected plugin has, or no plugin at all, is refused.
"$bin" --backend=cpu --quiet --plugin="$cpu_plugin" --plugin_config=keys256 --batch=1 --heads=1 --seq_len=8 \
  --head_dim=16 --verify --json=n.json >out.txt 2>err.txt
python3 -c "
import json; x = [r for r in json.load(open('n.json'))['results'] if r['strategy'] == 'plugin:cpu-example'][0]
assert x['status'] == 'ok' and x['config']['plugin_config'] == 'keys256', x" && ok || bad "--plugin_config=keys256"
expect_exit 2 "no selected plugin has that configuration" "$bin" --backend=cpu --plugin="$cpu_plugin" --plugin_config=nope
expect_exit 2 "--plugin_config=keys16: no plugin is selected" "$bin" --backend=cpu --plugin_config=keys16

# 6. Loading happens in a loader process (cli/plugin_loader.hpp): a library broken while it loads costs one line
# and exit code 2, never attnbench itself; no row runs and no report or cache is written. The crashing loaders
# must die by their signal under AddressSanitizer too (handle_segv=0, as in 2.), and the one that calls exit(0)
# must exit with 0 (detect_leaks=0: no leak report at that exit). `timeout` only keeps a regression (a hanging
# load) from hanging the test.
saved_asan=${ASAN_OPTIONS-}
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}handle_segv=0:handle_abort=0:detect_leaks=0"
loading_refused() {  # MODE NEEDLE: run, tune and list each refuse libbroken_MODE.so with NEEDLE
  local lib=$plugins/libbroken_$1.so
  rm -f lr.json lc.json
  expect_exit 2 "--plugin=$lib: $2" timeout 60 "$bin" --backend=cpu --plugin="$lib" --plugin_timeout=2 --batch=1 \
    --heads=1 --seq_len=8 --head_dim=16 --min_samples=1 --warmup=0 --max_time=0.01 --json=lr.json
  [[ ! -e lr.json && ! -s stdout.txt ]] && ok || bad "run --plugin=$1: a report or a table was written"
  expect_exit 2 "--plugin=$lib: $2" timeout 60 "$bin" tune --backend=cpu --plugin="$lib" --plugin_timeout=2 --batch=1 \
    --heads=1 --seq_len=8 --head_dim=16 --cache=lc.json
  [[ ! -e lc.json && ! -s stdout.txt ]] && ok || bad "tune --plugin=$1: a cache or a summary was written"
  expect_exit 2 "--plugin=$lib: $2" timeout 60 "$bin" list --plugin="$lib" --plugin_timeout=2
  [[ ! -s stdout.txt ]] && ok || bad "list --plugin=$1: a listing was printed"
}
loading_refused entry_crash "loading it crashed: its loader process was killed by signal 11 (SIGSEGV)"
loading_refused ctor_abort "loading it crashed: its loader process was killed by signal 6 (SIGABRT)"
loading_refused ctor_exit0 "its loader process exited with status 0 before describing it"
loading_refused ctor_hang "loading it took longer than 2 s"
loading_refused too_many_configs "loading it crashed: its loader process was killed by signal 11 (SIGSEGV)"
loading_refused ctl_config "its configuration 1 'two\\nlines\\x1b[31m red' must be one line of text of at most 256 bytes"
# The good plugin beside a broken one: still refused, and nothing of the good one runs.
rm -f lr.json
expect_exit 2 "libbroken_ctor_abort.so: loading it crashed" "$bin" --backend=cpu --plugin="$cpu_plugin" \
  --plugin="$plugins/libbroken_ctor_abort.so" --batch=1 --heads=1 --seq_len=8 --head_dim=16 --json=lr.json
[[ ! -e lr.json ]] && ok || bad "a report was written beside a broken plugin"
# A suite's "plugins" are loaded the same way.
mkdir -p bsuite && cp "$plugins/libbroken_entry_crash.so" bsuite/crash.so
cat >bsuite/s.json <<'JSON'
{"name": "broken-suite", "plugins": ["crash.so"], "grids": [{"batch": 1, "heads": 2, "seq_len": 20, "head_dim": 16}]}
JSON
rm -f lr.json
expect_exit 2 "bsuite/crash.so: loading it crashed: its loader process was killed by signal 11 (SIGSEGV)" \
  "$bin" --backend=cpu --config=bsuite/s.json --json=lr.json
[[ ! -e lr.json ]] && ok || bad "a report was written for a suite with a broken plugin"
if [[ -n "$saved_asan" ]]; then export ASAN_OPTIONS=$saved_asan; else unset ASAN_OPTIONS; fi

# compare matches plugin rows by (problem, strategy) like any other row.
for n in c1 c2; do
  "$bin" --backend=cpu --quiet --plugin="$cpu_plugin" --strategies=fused,plugin:cpu-example --batch=2 --heads=4 \
    --kv_heads=2 --seq_len=40 --head_dim=16 --min_samples=3 --warmup=0 --max_time=0.02 --json=$n.json >/dev/null 2>>err.txt
done
"$bin" compare c1.json c2.json >cmp.txt 2>>err.txt
rc=$?
if [[ $rc -eq 0 || $rc -eq 1 ]] && grep -q "plugin:cpu-example" cmp.txt && grep -q "2 rows matched" cmp.txt; then ok
else bad "compare of plugin rows (rc=$rc)"; cat cmp.txt err.txt | head -30; fi

finish
