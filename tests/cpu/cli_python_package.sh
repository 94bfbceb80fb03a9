#!/usr/bin/env bash
# The Python package end to end: `pip install --no-build-isolation --no-index` of the repository (pyproject.toml)
# into a venv that sees the system's pandas and matplotlib, then, outside the source tree, load_reports on real
# reports the binary wrote (one, many, a glob, a folder; every row and value as in the JSON; a bad file named),
# and the console commands attnbench-plot, attnbench-peer and attnbench-tune-repro.
# Without a Python that has pandas and setuptools it is skipped (exit 77), unless ATTNBENCH_REQUIRE_PYTHON_PACKAGE
# is set (CI sets it: there it must run).  Usage: cli_python_package.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # $work, cd there, expect_exit, ok, bad, finish

py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import pandas, setuptools, venv" 2>/dev/null; then
    py=$candidate; break
  fi
done
if [[ -z "$py" ]]; then
  echo "no python3 with pandas and setuptools (scripts/install-deps.sh installs them)"
  [[ -n "${ATTNBENCH_REQUIRE_PYTHON_PACKAGE:-}" ]] && exit 1
  exit 77
fi

# A copy of what pip needs, so that setuptools' build folders land here and not in the source tree.
mkdir pkgsrc && cp -r "$src/pyproject.toml" "$src/README.md" "$src/python" pkgsrc/
"$py" -m venv --system-site-packages venv || { bad "venv"; finish; exit; }
# A python3 whose pandas lives outside the system site-packages (a user or pip prefix, as on the GPU image)
# cannot lend it to the venv: that is a missing tool, not a failure of the package.
if ! venv/bin/python -c "import pandas, matplotlib, setuptools" 2>/dev/null; then
  echo "the venv does not see pandas/matplotlib/setuptools from $py's system site-packages"
  [[ -n "${ATTNBENCH_REQUIRE_PYTHON_PACKAGE:-}" ]] && exit 1
  exit 77
fi
venv/bin/python -m pip install -q --no-build-isolation --no-index ./pkgsrc >pip.txt 2>&1 && ok ||
  { bad "pip install of the package failed"; cat pip.txt; finish; exit; }
for c in attnbench-plot attnbench-peer attnbench-tune-repro; do [[ -x venv/bin/$c ]] && ok || bad "no console command $c"; done
export ATTNBENCH=$bin
mkdir -p reports out
"$bin" --backend=cpu --batch=1,2 --heads=2 --seq_len=33,64 --head_dim=16 --causal=false,true --max_time=0.02 -q \
  --json=reports/grid.json >/dev/null || bad "grid run"
"$bin" --backend=cpu --batch=1 --heads=4 --kv_heads=1 --q_len=1 --seq_len=100 --head_dim=32 --dtype=bf16 --pages=3 \
  --kv_layout=paged --max_time=0.02 -q --json=reports/decode.json >/dev/null || bad "decode run"
echo '{"schema": "attnbench.cache/1"}' >out/cache.json

cd out  # not the source tree: the installed package is what imports
venv=$work/venv/bin
$venv/python - "$work/reports" <<'PY' && ok || bad "load_reports"
import glob, json, math, os, sys
import attnbench
assert "site-packages" in attnbench.__file__, attnbench.__file__
d = sys.argv[1]
paths = [os.path.join(d, "grid.json"), os.path.join(d, "decode.json")]
df = attnbench.load_reports(paths)
docs = {p: json.load(open(p)) for p in paths}
assert len(df) == sum(len(x["results"]) for x in docs.values()), len(df)
for col in ("report", "row", "label", "strategy", "status", "median_ms", "noise", "tflops", "gbps", "batch", "seq_len",
            "q_len", "kv_heads", "dtype", "causal", "kv_layout", "device_backend", "device_copy_bandwidth_gbps",
            "settings_timer"):
    assert col in df.columns, col
for _, r in df.iterrows():  # every value as in the report the binary wrote
    j = docs[r["report"]]["results"][r["row"]]
    assert r["strategy"] == j["strategy"] and r["status"] == j["status"]
    assert r["seq_len"] == j["problem"]["seq_len"] and r["batch"] == j["problem"]["batch"]
    if j["status"] == "ok":
        assert math.isclose(r["median_ms"], j["time_ms"]["median"], rel_tol=1e-9), (r["median_ms"], j["time_ms"])
assert set(df["device_backend"]) == {"cpu"}
assert sorted(df[df.report.str.endswith("decode.json")]["q_len"].unique()) == [1]
assert len(attnbench.load_reports(os.path.join(d, "*.json"))) == len(df)   # a glob
assert len(attnbench.load_reports(d)) == len(df)                           # a folder
one = attnbench.load_reports(paths[0])                                     # one path
assert len(one) == len(docs[paths[0]]["results"])
try:
    attnbench.load_reports([paths[0], "cache.json"])
    raise SystemExit("a cache loaded as a report")
except attnbench.RowsError as e:
    assert "cache.json" in str(e), e
grid = attnbench.ask_grid(attnbench.find_binary(), ["--seq_len=64:256:*2", "--batch=3"])
assert [p["seq_len"] for p in grid] == [64, 128, 256] and {p["batch"] for p in grid} == {3}, grid
PY
if $venv/python -c "import matplotlib" 2>/dev/null; then
  $venv/attnbench-plot "$work/reports/grid.json" "$work/reports/decode.json" --out plots --formats png >plot.txt 2>&1 &&
    ok || { bad "attnbench-plot"; cat plot.txt; }
  for f in tflops launches time bandwidth; do head -c 8 "plots/grid_$f.png" 2>/dev/null | grep -q PNG && ok || bad "no $f plot"; done
  expect_exit 2 "cache.json" $venv/attnbench-plot cache.json --out plots
else
  echo "matplotlib not installed: attnbench-plot not run"
fi
$venv/attnbench-peer --dry-run -q --batch=1,2 --seq_len=64 --head_dim=32 --backends=flash,unfused --json peer.json && ok ||
  bad "attnbench-peer"
python3 -c 'import json; assert len(json.load(open("peer.json"))["results"]) == 4' && ok || bad "attnbench-peer rows"
expect_exit 2 "--batch" $venv/attnbench-peer --dry-run --batch=0 --json bad.json
$venv/attnbench-tune-repro >repro.txt 2>&1; [[ $? -eq 2 ]] && grep -q "CACHE.json" repro.txt && ok || bad "attnbench-tune-repro usage"
finish
