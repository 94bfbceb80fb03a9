"""Plugins (include/attnbench/plugin.h) driven through the real binary: the CPU example plugin's rows are
verified over awkward shapes (GQA/MQA, paged with a short last page, ragged, causal with q_len < S, B=1,
H=1, fp16 and bf16); the deliberately broken plugins (tests/plugins) each cost only their own row, which
says failed with the reason (crash, error return, out-of-bounds write, hang) or incorrect (wrong answer),
while the built-in strategies are still verified; a plugin built for another ABI is refused with one line;
a suite's "plugins" are loaded; tune searches the plugin's configurations into the cache and a run with
the cache uses it; a library broken while it is loaded (a crash in attnbench_plugin(), abort(), exit(0) or a
hang in its constructor, num_configs past its array, a configuration name with a line break) is one line and
exit code 2 for run, tune and list, with nothing run or written."""
import ctypes.util
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from cli_helpers import expect_exit, run


def asan_env(extra):
    """ASAN_OPTIONS with `extra` appended to whatever the environment already sets (scripts/sanitize.sh)."""
    have = os.environ.get("ASAN_OPTIONS", "")
    return {"ASAN_OPTIONS": f"{have}:{extra}" if have else extra}


def test_cpu_plugin_over_awkward_grid(attnbench, plugins, work):
    # 1. The CPU example plugin beside fused over awkward shapes, every row verified.
    r = run(attnbench, "--backend=cpu", "--quiet", f"--plugin={plugins}/libcpu_example_plugin.so",
            "--strategies=fused,plugin:cpu-example", "--batch=3", "--heads=4", "--kv_heads=1,2", "--seq_len=37",
            "--q_len=5", "--head_dim=16", "--page_size=8", "--kv_layout=paged,contiguous", "--causal=false,true",
            "--dtype=fp16,bf16", "--verify", "--min_samples=1", "--warmup=0", "--max_time=0.01", "--json=a.json")
    assert r.returncode == 0, f"cpu plugin over the awkward grid (rc={r.returncode}): {r.stderr[:3000]}"
    rows = json.load(open("a.json"))["results"]
    plug = [x for x in rows if x["strategy"] == "plugin:cpu-example"]
    assert len(plug) == 16 and len(rows) == 32, (len(plug), len(rows))
    for x in plug:
        assert x["status"] == "ok" and x["verify"]["passed"], x
        assert x["config"]["plugin_config"] == "keys64", x["config"]


def test_list_shows_the_plugin(attnbench, plugins, work):
    # `list --plugin` shows the loaded plugin with its strategy name and configurations, as text and JSON.
    cpu_plugin = plugins / "libcpu_example_plugin.so"
    text = run(attnbench, "list", f"--plugin={cpu_plugin}")
    js = run(attnbench, "list", "--json=-", f"--plugin={cpu_plugin}")
    assert text.returncode == 0 and js.returncode == 0, f"list --plugin: {text.stderr}{js.stderr}"
    assert re.search(r"plugin:cpu-example .*libcpu_example_plugin.so .*configs: keys64", text.stdout), text.stdout
    p = json.loads(js.stdout)["plugins"]
    assert len(p) == 1 and p[0]["strategy"] == "plugin:cpu-example" and p[0]["configs"][0] == "keys64", p


def test_cpu_plugin_ragged_and_one_head(attnbench, plugins, work):
    # Ragged lengths and H=1 with one KV head.
    r = run(attnbench, "--backend=cpu", "--quiet", f"--plugin={plugins}/libcpu_example_plugin.so",
            "--strategies=plugin:cpu-example", "--batch=3", "--heads=1", "--kv_lens=list:9,33,20", "--q_len=3",
            "--head_dim=32", "--page_size=16", "--kv_layout=paged,contiguous", "--causal=false,true", "--verify",
            "--min_samples=1", "--warmup=0", "--max_time=0.01", "--json=r.json")
    assert r.returncode == 0, f"cpu plugin on ragged lengths (rc={r.returncode}): {r.stderr[:3000]}"
    rows = json.load(open("r.json"))["results"]
    assert len(rows) == 4 and all(x["status"] == "ok" and x["verify"]["passed"] for x in rows), rows


def test_broken_plugins_cost_only_their_rows(attnbench, plugins, work):
    # 2. The broken plugins: each row failed or incorrect with its reason; the built-ins and the good plugin go on.
    args = ["--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=24", "--head_dim=16", "--verify",
            "--min_samples=1", "--warmup=0", "--max_time=0.01", "--plugin_timeout=3",
            f"--plugin={plugins}/libcpu_example_plugin.so"]
    args += [f"--plugin={plugins}/libbroken_{m}.so" for m in ("crash", "error", "oob", "hang", "wrong")]
    start = time.monotonic()
    # Under AddressSanitizer (scripts/sanitize.sh) the crashing plugin's SIGSEGV would be caught by ASan's handler
    # and turned into an exit status; with handle_segv=0 the child dies by the signal, as it does outside the
    # sanitizer.
    r = run(attnbench, *args, "--json=b.json", env=asan_env("handle_segv=0"))
    took = time.monotonic() - start
    assert r.returncode == 1 and took < 30, f"broken plugins (rc={r.returncode}, {took:.0f}s): {r.stderr[:3000]}"
    rows = {x["strategy"]: x for x in json.load(open("b.json"))["results"]}
    assert len(rows) == 11, sorted(rows)
    for s in ["nested", "head_batched", "fully_batched", "ptr_array", "fused", "plugin:cpu-example"]:
        assert rows[s]["status"] == "ok" and rows[s]["verify"]["passed"], rows[s]

    def want(s, status, *needles):
        x = rows[s]
        assert x["status"] == status, x
        for n in needles:
            assert n in x["reason"], (n, x["reason"])
    want("plugin:broken-crash", "failed", "crashed", "SIGSEGV")
    want("plugin:broken-error", "failed", "plugin forward failed: simulated launch failure")
    want("plugin:broken-oob", "failed", "out-of-bounds write", "after the end of O")
    want("plugin:broken-hang", "failed", "timed out", "--plugin_timeout=3")
    want("plugin:broken-wrong", "incorrect", "rel L2 error")
    # The table shows every row.
    t = run(attnbench, "report", "b.json")
    assert t.returncode == 0 and "plugin:broken-hang" in t.stdout and "plugin:cpu-example" in t.stdout, \
        f"report table of plugin rows: {t.stdout}{t.stderr}"


def test_loading_refusals(attnbench, plugins, work):
    # 3. Loading: another ABI version, a missing file, a name loaded twice, an unknown plugin strategy.
    cpu_plugin = plugins / "libcpu_example_plugin.so"
    expect_exit(2, "built for plugin ABI version 999, this attnbench takes version 1",
                attnbench, "--backend=cpu", f"--plugin={plugins}/libbroken_abi.so")
    expect_exit(2, "--plugin=nowhere.so: no such file", attnbench, "--backend=cpu", "--plugin=nowhere.so")
    shutil.copy(cpu_plugin, "copy.so")
    expect_exit(2, "a plugin named 'cpu-example' is already loaded", attnbench, "--backend=cpu",
                f"--plugin={cpu_plugin}", "--plugin=copy.so")
    expect_exit(2, "unknown strategy 'plugin:nope'", attnbench, "--backend=cpu", f"--plugin={cpu_plugin}",
                "--strategies=plugin:nope")


def test_library_that_is_not_a_plugin(attnbench, work):
    # A library that is not a plugin (libm, found as ldconfig knows it).
    libm = ctypes.util.find_library("m") or ""
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if not libm or not ldconfig:
        pytest.skip("libm or ldconfig not found: no library that is not a plugin to load")
    libm_path = ""
    for line in subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == libm:
            libm_path = fields[-1]
            break
    if not libm_path:
        pytest.skip(f"ldconfig -p does not list {libm}")
    expect_exit(2, "does not export attnbench_plugin()", attnbench, "--backend=cpu", f"--plugin={libm_path}")


def test_suite_plugins_are_loaded(attnbench, plugins, work):
    # 4. A suite's "plugins" (relative to the suite file).
    os.makedirs("suite", exist_ok=True)
    shutil.copy(plugins / "libcpu_example_plugin.so", "suite/mine.so")
    open("suite/s.json", "w").write('{"name": "plugin-suite", "plugins": ["mine.so"], "grids": [{"batch": 1, '
                                    '"heads": 2, "seq_len": 20, "head_dim": 16}]}\n')
    r = run(attnbench, "--backend=cpu", "--quiet", "--config=suite/s.json", "--strategies=plugin:cpu-example",
            "--verify", "--min_samples=1", "--warmup=0", "--max_time=0.01", "--json=s.json")
    assert r.returncode == 0, f"suite plugins (rc={r.returncode}): {r.stderr}"
    rows = json.load(open("s.json"))["results"]
    assert [x["strategy"] for x in rows] == ["plugin:cpu-example"] and rows[0]["verify"]["passed"], rows


def test_tune_searches_plugin_configs_and_run_uses_them(attnbench, plugins, work):
    # 5. tune searches the plugin's configurations (each a child process) into the cache; a run with it uses it.
    cpu_plugin = plugins / "libcpu_example_plugin.so"
    r = run(attnbench, "tune", "--backend=cpu", "--quiet", f"--plugin={cpu_plugin}", "--strategies=plugin:cpu-example",
            "--batch=1", "--heads=2", "--seq_len=64", "--head_dim=16", "--cache=c.json", "--min_samples=2",
            "--warmup=0", "--max_time=0.05")
    assert r.returncode == 0, f"tune over plugin configurations (rc={r.returncode}): {r.stdout}{r.stderr}"
    e = json.load(open("c.json"))["plugins"]
    assert len(e) == 1 and e[0]["strategy"] == "plugin:cpu-example" and e[0]["candidates"] == 3 \
        and e[0]["failed"] == 0, e
    assert e[0]["config"] in ("keys64", "keys16", "keys256") and e[0]["best_ms"] > 0, e
    config = e[0]["config"]
    r = run(attnbench, "--backend=cpu", "--quiet", f"--plugin={cpu_plugin}", "--strategies=plugin:cpu-example",
            "--batch=1", "--heads=2", "--seq_len=64", "--head_dim=16", "--cache=c.json", "--verify", "--min_samples=1",
            "--warmup=0", "--max_time=0.01", "--json=t.json")
    assert r.returncode == 0, f"run with the tuned plugin configuration (rc={r.returncode}): {r.stderr}"
    x = json.load(open("t.json"))["results"][0]
    assert x["config"]["plugin_config"] == config and x["config"]["source"] == "cache" and x["verify"]["passed"], \
        x["config"]


def test_plugin_config_flag(attnbench, plugins, work):
    # --plugin_config picks one; a name no selected plugin has, or no plugin at all, is refused.
    cpu_plugin = plugins / "libcpu_example_plugin.so"
    run(attnbench, "--backend=cpu", "--quiet", f"--plugin={cpu_plugin}", "--plugin_config=keys256", "--batch=1",
        "--heads=1", "--seq_len=8", "--head_dim=16", "--verify", "--json=n.json")
    x = [r for r in json.load(open("n.json"))["results"] if r["strategy"] == "plugin:cpu-example"][0]
    assert x["status"] == "ok" and x["config"]["plugin_config"] == "keys256", x
    expect_exit(2, "no selected plugin has that configuration", attnbench, "--backend=cpu", f"--plugin={cpu_plugin}",
                "--plugin_config=nope")
    expect_exit(2, "--plugin_config=keys16: no plugin is selected", attnbench, "--backend=cpu",
                "--plugin_config=keys16")


# 6. Loading happens in a loader process (orchestrate/plugin_loader.hpp): a library broken while it loads costs one line
# and exit code 2, never attnbench itself; no row runs and no report or cache is written. The crashing loaders
# must die by their signal under AddressSanitizer too (handle_segv=0, as in 2.), and the one that calls exit(0)
# must exit with 0 (detect_leaks=0: no leak report at that exit). The 60 s timeout only keeps a regression (a
# hanging load) from hanging the test.
LOADER_ASAN = "handle_segv=0:handle_abort=0:detect_leaks=0"


@pytest.mark.parametrize("mode, needle", [
    ("entry_crash", "loading it crashed: its loader process was killed by signal 11 (SIGSEGV)"),
    ("ctor_abort", "loading it crashed: its loader process was killed by signal 6 (SIGABRT)"),
    ("ctor_exit0", "its loader process exited with status 0 before describing it"),
    ("ctor_hang", "loading it took longer than 2 s"),
    ("too_many_configs", "loading it crashed: its loader process was killed by signal 11 (SIGSEGV)"),
    ("ctl_config", "its configuration 1 'two\\nlines\\x1b[31m red' must be one line of text of at most 256 bytes"),
    ("bad_layout", "its qo_layout 7 is neither AB_QO_HEAD_MAJOR (0) nor AB_QO_TOKEN_MAJOR (1)"),
    ("short_table", "its table is 40 bytes, expected at least"),
    ("bad_variants", "its variants 0x44 hold bits no ab_variant has (0x40)"),
])
def test_broken_while_loading(attnbench, plugins, work, mode, needle):
    # run, tune and list each refuse libbroken_MODE.so with NEEDLE, writing nothing.
    lib = plugins / f"libbroken_{mode}.so"
    env = asan_env(LOADER_ASAN)
    r = expect_exit(2, f"--plugin={lib}: {needle}", attnbench, "--backend=cpu", f"--plugin={lib}",
                    "--plugin_timeout=2", "--batch=1", "--heads=1", "--seq_len=8", "--head_dim=16", "--min_samples=1",
                    "--warmup=0", "--max_time=0.01", "--json=lr.json", env=env, timeout=60)
    assert not os.path.exists("lr.json") and not r.stdout, f"run --plugin={mode}: a report or a table was written"
    r = expect_exit(2, f"--plugin={lib}: {needle}", attnbench, "tune", "--backend=cpu", f"--plugin={lib}",
                    "--plugin_timeout=2", "--batch=1", "--heads=1", "--seq_len=8", "--head_dim=16", "--cache=lc.json",
                    env=env, timeout=60)
    assert not os.path.exists("lc.json") and not r.stdout, f"tune --plugin={mode}: a cache or a summary was written"
    r = expect_exit(2, f"--plugin={lib}: {needle}", attnbench, "list", f"--plugin={lib}", "--plugin_timeout=2",
                    env=env, timeout=60)
    assert not r.stdout, f"list --plugin={mode}: a listing was printed"


def test_good_plugin_beside_a_broken_one(attnbench, plugins, work):
    # The good plugin beside a broken one: still refused, and nothing of the good one runs.
    expect_exit(2, "libbroken_ctor_abort.so: loading it crashed", attnbench, "--backend=cpu",
                f"--plugin={plugins}/libcpu_example_plugin.so", f"--plugin={plugins}/libbroken_ctor_abort.so",
                "--batch=1", "--heads=1", "--seq_len=8", "--head_dim=16", "--json=lr.json", env=asan_env(LOADER_ASAN))
    assert not os.path.exists("lr.json"), "a report was written beside a broken plugin"


def test_broken_suite_plugin(attnbench, plugins, work):
    # A suite's "plugins" are loaded the same way.
    os.makedirs("bsuite", exist_ok=True)
    shutil.copy(plugins / "libbroken_entry_crash.so", "bsuite/crash.so")
    open("bsuite/s.json", "w").write('{"name": "broken-suite", "plugins": ["crash.so"], "grids": [{"batch": 1, '
                                     '"heads": 2, "seq_len": 20, "head_dim": 16}]}\n')
    expect_exit(2, "bsuite/crash.so: loading it crashed: its loader process was killed by signal 11 (SIGSEGV)",
                attnbench, "--backend=cpu", "--config=bsuite/s.json", "--json=lr.json", env=asan_env(LOADER_ASAN))
    assert not os.path.exists("lr.json"), "a report was written for a suite with a broken plugin"


def test_compare_matches_plugin_rows(attnbench, plugins, work):
    # compare matches plugin rows by (problem, strategy) like any other row.
    err = ""
    for n in ("c1", "c2"):
        err += run(attnbench, "--backend=cpu", "--quiet", f"--plugin={plugins}/libcpu_example_plugin.so",
                   "--strategies=fused,plugin:cpu-example", "--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=40",
                   "--head_dim=16", "--min_samples=3", "--warmup=0", "--max_time=0.02", f"--json={n}.json").stderr
    r = run(attnbench, "compare", "c1.json", "c2.json")
    assert r.returncode in (0, 1) and "plugin:cpu-example" in r.stdout and "2 rows matched" in r.stdout, \
        f"compare of plugin rows (rc={r.returncode}): {r.stdout}{err}{r.stderr}"
