"""The Python package (python/attnbench, pyproject.toml) end to end.

`pip install --no-build-isolation --no-index` from a copy of the source tree into a venv that sees the system's
pandas and matplotlib leaves that copy exactly as it was (no build/ folder, no egg-info, no bytecode); then,
outside the tree and with no attnbench binary anywhere (not on the PATH; $ATTNBENCH a trap that records a
call), load_reports reads real reports the binary wrote (one, many, a glob, a folder; every row and value as
in the JSON; a named file that is not a report is an error), skips the other JSON of a folder or glob with a
warning naming each file, and gives the problem's axes as numbers (the README's pivot over seq_len comes out
64, 128, 256, 512); the console commands attnbench-plot (no binary either), attnbench-peer and
attnbench-tune-repro run. Without the venv: the package's flat rows are exactly those of `attnbench report FILE
--format=json` on the committed reports and on fresh ones of every kind, and peer_torch's FLOPs and bytes are
the binary's (`attnbench grid`).

The venv tests need a python3 with pandas, matplotlib, setuptools and venv (Debian's: scripts/install-deps.sh);
without one they are skipped, unless ATTNBENCH_REQUIRE_PYTHON_PACKAGE is set (CI), where they fail."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from cli_helpers import expect_exit, run

CPU = ["--backend=cpu", "--quiet", "--max_time=0.01", "--min_samples=2"]
# The README's example (README.md, "Install, package, Python"), run as written.
README_PIVOT = 'df.pivot_table(index="seq_len", columns="strategy", values="median_ms")'


def missing(why):
    if os.environ.get("ATTNBENCH_REQUIRE_PYTHON_PACKAGE"):
        pytest.fail(f"{why}, and ATTNBENCH_REQUIRE_PYTHON_PACKAGE is set: the package must be tested here")
    pytest.skip(why)


# ---- reports the binary writes -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reports(attnbench, src, plugins, tmp_path_factory):
    """Reports of several kinds, each file in its own name; `cache.json` is not a report."""
    d = tmp_path_factory.mktemp("reports")

    def make(name, *args, env=None, rc=0):
        r = run(attnbench, *CPU, *args, f"--json={name}", env=env, cwd=d)
        assert r.returncode == rc, f"{name}: exit {r.returncode}: {r.stderr[-2000:]}"
        return d / name

    out = {
        "grid": make("grid.json", "--batch=1,2", "--heads=2", "--seq_len=33,64", "--head_dim=16", "--causal=false,true"),
        "decode": make("decode.json", "--batch=1", "--heads=4", "--kv_heads=1", "--q_len=1", "--seq_len=100",
                       "--head_dim=32", "--dtype=bf16", "--pages=3", "--kv_layout=paged", "--verify"),
        "seq": make("seq.json", "--batch=1", "--heads=2", "--seq_len=512,64,256,128", "--head_dim=16",
                    "--strategies=fused,head_batched"),
        "ragged": make("ragged.json", "--batch=3", "--heads=4", "--kv_heads=2", "--kv_lens=list:7,20,33;uniform:8:40:2",
                       "--q_len=4", "--head_dim=16", "--page_size=8", "--causal", "--verify"),
        "rounds": make("rounds.json", "--batch=1", "--heads=2", "--seq_len=32", "--head_dim=16", "--rounds=3",
                       "--samples", "--strategies=fused,nested", env={"ATTNBENCH_INJECT_SLOWDOWN": "fused=10%"}),
        "fault": make("fault.json", "--batch=1", "--heads=2", "--seq_len=32,48", "--head_dim=16,512", "--verify",
                      env={"ATTNBENCH_INJECT_FAULT": "head_batched"}, rc=1),
        "profile": make("profile.json", "--batch=1", "--heads=2", "--seq_len=32", "--head_dim=16", "--profile",
                        "--strategies=fused,ptr_array", "--tile=m64n64w4s2"),
        # The variants (docs/variants.md): labels, keys and cache keys the package must spell as the binary does.
        "variants": make("variants.json", "--batch=1", "--heads=2", "--seq_len=40", "--head_dim=16", "--causal",
                         "--window=5", "--softcap=20,30", "--sinks=false,true", "--strategies=fused,nested"),
        # A value head dim of its own (MLA): given as head_dim too (absent from the JSON), and of its own width.
        "head_dim_v": make("head_dim_v.json", "--batch=1", "--heads=4", "--kv_heads=1", "--seq_len=40", "--q_len=2",
                           "--head_dim=24", "--head_dim_v=16,24", "--page_size=16", "--kv_layout=paged",
                           "--strategies=fused,nested"),
    }
    if (plugins / "libcpu_example_plugin.so").exists():
        out["plugin"] = make("plugin.json", "--batch=1", "--heads=2", "--seq_len=32", "--head_dim=16", "--verify",
                             f"--plugin={plugins / 'libcpu_example_plugin.so'}", f"--plugin={plugins / 'libbroken_wrong.so'}",
                             "--strategies=plugin:cpu-example,plugin:broken-wrong,fused", rc=1)
    # Peer rows: a dry run of peer_torch merged into a report.
    shutil.copy(out["grid"], d / "peer.json")
    r = run(sys.executable, src / "scripts/peer_torch.py", "--dry-run", "-q", "--merge", d / "peer.json",
            env={"ATTNBENCH": attnbench}, cwd=d)
    assert r.returncode == 0, r.stderr
    out["peer"] = d / "peer.json"
    (d / "cache.json").write_text('{"schema": "attnbench.cache/1"}\n')
    return out


@pytest.fixture
def package(src):
    """The package imported from the source tree (no bytecode written there)."""
    sys.path.insert(0, str(src / "python"))
    before, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        import attnbench.peer_torch
        import attnbench.reports
        yield attnbench
    finally:
        sys.dont_write_bytecode = before
        sys.path.remove(str(src / "python"))


# ---- the package without pandas: the binary's flat rows, the binary's FLOPs -------------------------------

def same(a, b, where="document"):
    """'' when a and b are the same JSON (numbers compare as numbers, everything else with its type), else where
    they first differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where}: keys {sorted(set(a) ^ set(b))}"
        return next((d for d in (same(a[k], b[k], f"{where}.{k}") for k in a) if d), "")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items vs {len(b)}"
        return next((d for d in (same(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))) if d), "")
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return "" if (a == b if numbers else (type(a) is type(b) and a == b)) else f"{where}: {a!r} vs {b!r}"


def committed_reports(src):
    found = []
    for folder in ("docs", "tests/data"):
        for root, _, files in os.walk(src / folder):
            for name in sorted(files):
                if name.endswith(".json"):
                    try:
                        with open(os.path.join(root, name)) as f:
                            doc = json.load(f)
                    except ValueError:
                        continue
                    if isinstance(doc, dict) and doc.get("schema") == "attnbench.report/1":
                        found.append(os.path.join(root, name))
    return found


def test_flat_rows_agree_with_the_binary(attnbench, src, reports, package):
    # `attnbench report FILE --format=json` and the package's reading, row by row and value by value.
    paths = committed_reports(src) + [str(p) for k, p in reports.items()]
    for path in paths:
        r = run(attnbench, "report", path, "--json=-")
        assert r.returncode == 0, f"{path}: {r.stderr}"
        mine = package.reports.read_flat(path)
        assert not same(mine, json.loads(r.stdout)), f"{path}: {same(mine, json.loads(r.stdout))}"
        assert mine["rows"], path
    if "plugin" in reports:  # a plugin's rows carry its library's version, the built-ins none
        versions = {r["strategy"]: r["library_version"] for r in package.reports.read_flat(reports["plugin"])["rows"]}
        assert versions["plugin:cpu-example"] == "1.0.0" and versions["fused"] is None, versions
    kinds = {r["status"] for p in paths for r in package.reports.read_flat(p)["rows"]}
    assert kinds == {"ok", "failed", "unsupported", "incorrect"} or "plugin" not in reports, kinds


def test_a_malformed_report_is_refused_naming_the_file_and_field(reports, package, tmp_path):
    doc = json.loads(reports["grid"].read_text())
    doc["results"][3]["problem"]["causal"] = "yes"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(package.RowsError, match=r"bad\.json.*results\[3\]\.problem\.causal must be true or false"):
        package.reports.read_flat(str(tmp_path / "bad.json"))
    doc["results"][3]["problem"]["causal"] = True
    doc["results"][0]["library_version"] = 3
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(package.RowsError, match=r"bad\.json.*results\[0\]\.library_version must be a string"):
        package.reports.read_flat(str(tmp_path / "bad.json"))
    with pytest.raises(package.RowsError, match=r"cache\.json.*expected 'attnbench\.report/1'"):
        package.reports.read_flat(str(reports["grid"].parent / "cache.json"))


def test_peer_torch_takes_flops_and_bytes_from_the_binary(attnbench, package, monkeypatch):
    pt = package.peer_torch
    for formula in ("flops", "bytes_moved", "pairs"):
        assert not hasattr(pt, formula), f"peer_torch still derives {formula} itself"
    monkeypatch.setenv("ATTNBENCH", attnbench)
    flags = [["--batch=2", "--heads=8", "--kv_heads=2", "--q_len=1", "--seq_len=1000", "--head_dim=128", "--causal"],
             ["--batch=3", "--heads=4", "--kv_lens=list:7,20,33", "--q_len=5", "--head_dim=64", "--dtype=bf16", "--causal"]]
    problems = [x for f in flags for x in pt.grid_from_flags(pt.parse_args(f))]
    # A report's shapes (--merge): a paged problem, run by the peer with contiguous K/V in one page.
    paged = json.loads(run(attnbench, "grid", "--batch=1", "--heads=2", "--seq_len=300", "--head_dim=64", "--pages=3",
                           "--kv_layout=paged", "--json=-").stdout)
    problems += pt.grid_from_report({"results": [{"problem": p} for p in paged]})
    flags.append(["--batch=1", "--heads=2", "--seq_len=300", "--head_dim=64"])
    problems = pt.unique(problems)
    work = pt.ask_work(problems)
    assert len(problems) == len(flags) == len(work)
    for (p, _), f in zip(problems, flags):  # the binary's own count of the problem the peer runs
        grid = json.loads(run(attnbench, "grid", *f, "--json=-").stdout)
        assert len(grid) == 1 and p["seq_len"] == grid[0]["seq_len"]
        assert work[pt.problem_key(p)] == (grid[0]["flops"], grid[0]["bytes"]), (f, work, grid[0])


# ---- the installed package ---------------------------------------------------------------------------------------

def python_with_pandas():
    for candidate in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "import pandas, setuptools, venv"], capture_output=True).returncode == 0:
            return candidate
    return None


def files_under(root):
    out = set()
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        out |= {os.path.join(rel, x) for x in dirs + files}
    return out


@pytest.fixture(scope="module")
def venv(src, tmp_path_factory):
    py = python_with_pandas()
    if py is None:
        missing("no python3 with pandas and setuptools (scripts/install-deps.sh installs them)")
    d = tmp_path_factory.mktemp("package")
    tree = d / "tree"  # a copy of the source tree, with an (empty) CMake build folder where setuptools used to write
    shutil.copytree(src, tree, ignore=lambda folder, names: [
        n for n in names if n in (".git", "__pycache__") or (folder == str(src) and n.startswith(("build", "out")))])
    (tree / "build").mkdir()
    (tree / "build" / "CMakeCache.txt").write_text("# the CMake build folder\n")
    before = files_under(tree)
    r = subprocess.run([py, "-m", "venv", "--system-site-packages", str(d / "venv")], capture_output=True, text=True)
    assert r.returncode == 0, f"python3 -m venv: {r.stderr}"
    vpy = d / "venv/bin/python"
    # A python3 whose pandas lives outside the system site-packages (a user or pip prefix, as on the GPU image)
    # cannot lend it to the venv: that is a missing tool, not a failure of the package.
    if subprocess.run([vpy, "-c", "import pandas, matplotlib, setuptools"], capture_output=True).returncode != 0:
        missing(f"the venv does not see pandas/matplotlib/setuptools from {py}'s system site-packages")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode a build writes shows
    r = subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", str(tree)],
                       capture_output=True, text=True, cwd=d, env=env)
    assert r.returncode == 0, f"pip install of the package failed:\n{r.stdout}\n{r.stderr}"
    trap = d / "trap"  # stands in for the binary where reading must not need one: records any call
    trap.write_text(f"#!/bin/sh\necho \"$@\" >>{d / 'trap-called'}\nexit 3\n")
    trap.chmod(0o755)
    (d / "out").mkdir()
    return {"dir": d, "python": str(vpy), "bin": d / "venv/bin", "before": before, "after": files_under(tree),
            "trap": str(trap), "called": d / "trap-called"}


def no_binary_env(venv):
    """No attnbench on the PATH; $ATTNBENCH the trap."""
    path = os.pathsep.join(p for p in [str(venv["bin"]), "/usr/bin", "/bin"]
                           if not os.path.exists(os.path.join(p, "attnbench")))
    return {"PATH": path, "ATTNBENCH": venv["trap"]}


def in_venv(venv, code, *args, env=None):
    """Runs `code` with the venv's python outside the source tree; asserts it succeeded; returns its result."""
    r = run(venv["python"], "-c", code, *args, env=env, cwd=venv["dir"] / "out")
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def test_pip_install_leaves_the_source_tree_clean(venv):
    added, removed = venv["after"] - venv["before"], venv["before"] - venv["after"]
    assert not added and not removed, f"pip install changed the tree: added {sorted(added)[:20]}, removed {sorted(removed)[:20]}"
    for c in ("attnbench-plot", "attnbench-peer", "attnbench-tune-repro"):
        assert os.access(venv["bin"] / c, os.X_OK), f"no console command {c}"


LOAD = r'''
import glob, json, math, os, sys
import attnbench
assert "site-packages" in attnbench.__file__, attnbench.__file__
paths = sys.argv[1:3]
df = attnbench.load_reports(paths)
docs = {p: json.load(open(p)) for p in paths}
assert len(df) == sum(len(x["results"]) for x in docs.values()), len(df)
for col in ("report", "row", "label", "strategy", "status", "median_ms", "noise", "tflops", "gbps", "batch", "seq_len",
            "q_len", "kv_heads", "dtype", "causal", "kv_layout", "device_backend", "device_copy_bandwidth_gbps",
            "settings_timer", "cache_key", "key"):
    assert col in df.columns, col
for _, r in df.iterrows():  # every value as in the report the binary wrote
    j = docs[r["report"]]["results"][r["row"]]
    assert r["strategy"] == j["strategy"] and r["status"] == j["status"]
    assert r["seq_len"] == j["problem"]["seq_len"] and r["batch"] == j["problem"]["batch"]
    if j["status"] == "ok":
        assert math.isclose(r["median_ms"], j["time_ms"]["median"], rel_tol=1e-9), (r["median_ms"], j["time_ms"])
        assert math.isclose(r["tflops"], j["tflops"], rel_tol=1e-9)
assert set(df["device_backend"]) == {"cpu"}
assert sorted(df[df.report.str.endswith("decode.json")]["q_len"].unique()) == [1]
d = os.path.dirname(paths[0])
one = attnbench.load_reports(paths[0])                                     # one path
assert len(one) == len(docs[paths[0]]["results"])
assert len(attnbench.load_reports(os.path.join(d, "*.json"))) == len(df)   # a glob
assert len(attnbench.load_reports(d)) == len(df)                           # a folder
try:
    attnbench.load_reports([paths[0], sys.argv[3]])
    raise SystemExit("a cache named on its own loaded as a report")
except attnbench.RowsError as e:
    assert "cache.json" in str(e), e
'''


def test_load_reports_needs_no_binary(venv, reports, tmp_path):
    for name in ("grid", "decode"):
        shutil.copy(reports[name], tmp_path)
    in_venv(venv, LOAD, tmp_path / "grid.json", tmp_path / "decode.json", reports["grid"].parent / "cache.json",
            env=no_binary_env(venv))
    assert not venv["called"].exists(), f"reading reports ran the binary: {venv['called'].read_text()}"


SKIP = r'''
import os, sys, warnings
import attnbench
d = sys.argv[1]
for what in (d, os.path.join(d, "*.json")):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = attnbench.load_reports(what)
    assert sorted(set(os.path.basename(p) for p in df.report)) == ["decode.json", "grid.json"], set(df.report)
    said = [str(w.message) for w in caught]
    for other in ("cache.json", "suite.json", "summary.json", "list.json"):
        assert sum(other in m for m in said) == 1, (other, said)
    assert all(issubclass(w.category, UserWarning) for w in caught)
for named in ("cache.json", "suite.json", "list.json", "broken.json"):  # named on its own: an error
    try:
        attnbench.load_reports(os.path.join(d, named))
        raise SystemExit(f"{named} loaded as a report")
    except attnbench.RowsError as e:
        assert named in str(e), e
'''


def test_a_folder_with_other_json_warns_and_skips_it(venv, reports, tmp_path):
    for name in ("grid", "decode"):
        shutil.copy(reports[name], tmp_path)
    shutil.copy(reports["grid"].parent / "cache.json", tmp_path)
    (tmp_path / "suite.json").write_text('{"name": "s", "grids": [{"batch": 1}]}')
    (tmp_path / "summary.json").write_text('{"schema": "attnbench.tune-summary/1", "rows": []}')
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    in_venv(venv, SKIP, tmp_path, env=no_binary_env(venv))
    (tmp_path / "broken.json").write_text('{"schema": "attnbench.report/1", "results": [')  # not JSON: an error
    r = run(venv["python"], "-c", "import attnbench, sys; attnbench.load_reports(sys.argv[1])", tmp_path,
            env=no_binary_env(venv), cwd=venv["dir"] / "out")
    assert r.returncode != 0 and "broken.json" in r.stderr and "malformed JSON" in r.stderr, r.stderr[-1000:]
    assert not venv["called"].exists()


SORT = r'''
import sys
import attnbench
df = attnbench.load_reports(sys.argv[1])
assert list(df.seq_len.unique()) == [512, 64, 256, 128], list(df.seq_len)  # the report's own order
assert str(df.seq_len.dtype) == "int64" and str(df.batch.dtype) == "int64", df.dtypes
table = %s
assert list(table.index) == [64, 128, 256, 512], list(table.index)
assert list(table.columns) == ["fused", "head_batched"], list(table.columns)
wide = df.pivot_table(index="strategy", columns="seq_len", values="median_ms")
assert list(wide.columns) == [64, 128, 256, 512], list(wide.columns)
''' % README_PIVOT


def test_axes_sort_numerically_in_the_readme_pivot(venv, reports):
    in_venv(venv, SORT, reports["seq"], env=no_binary_env(venv))


def test_console_commands(attnbench, venv, reports):
    bin_ = venv["bin"]
    out = venv["dir"] / "out"
    grid, decode = reports["grid"], reports["decode"]
    # attnbench-plot reads the reports itself: no binary.
    r = run(bin_ / "attnbench-plot", grid, decode, "--out", out / "plots", "--formats", "png", env=no_binary_env(venv),
            cwd=out)
    assert r.returncode == 0, r.stderr
    for f in ("tflops", "launches", "time", "bandwidth"):
        assert (out / f"plots/grid_{f}.png").read_bytes()[:8].endswith(b"PNG\r\n\x1a\n"), f"no {f} plot"
    expect_exit(2, "cache.json", bin_ / "attnbench-plot", grid.parent / "cache.json", "--out", out / "plots",
                env=no_binary_env(venv), cwd=out)
    assert not venv["called"].exists()
    # attnbench-peer asks the binary for its grid (and the FLOPs and bytes of every problem).
    r = run(bin_ / "attnbench-peer", "--dry-run", "-q", "--batch=1,2", "--seq_len=64", "--head_dim=32",
            "--backends=flash,unfused", "--json", out / "peer.json", env={"ATTNBENCH": attnbench}, cwd=out)
    assert r.returncode == 0, r.stderr
    assert len(json.loads((out / "peer.json").read_text())["results"]) == 4
    expect_exit(2, "--batch", bin_ / "attnbench-peer", "--dry-run", "--batch=0", "--json", out / "bad.json",
                env={"ATTNBENCH": attnbench}, cwd=out)
    r = run(bin_ / "attnbench-tune-repro", cwd=out)
    assert r.returncode == 2 and "CACHE.json" in r.stderr, r.stderr


def test_ask_grid_asks_the_binary(attnbench, venv):
    code = ("import attnbench\n"
            "grid = attnbench.ask_grid(attnbench.find_binary(), ['--seq_len=64:256:*2', '--batch=3'])\n"
            "assert [p['seq_len'] for p in grid] == [64, 128, 256] and {p['batch'] for p in grid} == {3}, grid\n"
            "assert all(p['flops'] > 0 and p['bytes'] > 0 for p in grid), grid\n")
    in_venv(venv, code, env={"ATTNBENCH": attnbench})
