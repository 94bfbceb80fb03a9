"""--devices (issue 17, point 1) with the real binary on the CPU backend, where each index is a worker process:
rows from every worker, the same rows (and the same verify errors: the same inputs) as a one-process run,
in grid order, each carrying its device, the header listing every device; a worker killed mid-run costs
only its problem (failed, with the reason) while the rest complete; a sticky device fault resumes in a
fresh worker as a one-process run does; different models refused unless --mixed_devices; a tune over
three workers gives the cache one process gives.

The tests run in order in one scratch folder (later ones read what earlier ones wrote); every command runs with
TMPDIR set to its tmp/ folder (the pools' private directories, checked by the last test to be gone)."""
import json
import os
import re

import pytest

from cli_helpers import assert_one_line_error, run

GRID = ["--backend=cpu", "--batch=1,2", "--heads=2", "--kv_heads=1", "--seq_len=17,40", "--head_dim=8",
        "--causal=false,true", "--warmup=0", "--min_samples=1", "--max_time=0.01", "--verify"]
TUNE = ["tune", "--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16,24,40", "--head_dim=8",
        "--strategies=fused,head_batched", "--warmup=0", "--min_samples=1", "--max_time=0.02"]


@pytest.fixture
def ab(attnbench, in_module_work):
    """Runs the binary in the module's folder with TMPDIR=tmp/ (plus env)."""
    tmpdir = in_module_work / "tmp"
    tmpdir.mkdir(exist_ok=True)

    def call(*args, env=None):
        return run(attnbench, *args, env={"TMPDIR": str(tmpdir), **(env or {})})
    return call


def load(path):
    with open(path) as f:
        return json.load(f)


def same(one, other, killed=-1):
    """Compares the rows of two reports (one process, several workers): the same rows in the same order, each
    from a listed device, every device used, the same verify errors; the rows of problem `killed` failed."""
    one, other = load(one), load(other)
    devices = sorted(d["index"] for d in other["devices"])
    key = lambda r: (json.dumps(r["problem"], sort_keys=True), r["strategy"])
    a, b = one["results"], other["results"]
    assert [key(r) for r in a] == [key(r) for r in b], "rows or their order differ"
    problems = []
    for r in b:
        k = json.dumps(r["problem"], sort_keys=True)
        if k not in problems:
            problems.append(k)
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


def test_one_process_records_device_0(ab):
    r = ab(*GRID, "--quiet", "--json=one.json")
    assert r.returncode == 0, f"one-process run: {(r.stdout + r.stderr)[-2000:]}"
    d = load("one.json")
    assert [x["index"] for x in d["devices"]] == [0] and all(x["device"] == 0 for x in d["results"]), \
        "a one-process run records device 0"


@pytest.fixture(scope="module")
def three_workers():
    return {}


def test_three_workers_give_the_same_rows(ab, three_workers):
    # Three workers: the same rows, each problem on one of them, the progress line counting per device.
    r = ab(*GRID, "--devices=0,1,2", "--json=three.json")
    three_workers["result"] = r
    assert r.returncode == 0, f"three workers (rc={r.returncode}): {r.stderr[-2000:]}"
    same("one.json", "three.json")


def test_three_workers_progress_line_per_device(three_workers):
    err = three_workers["result"].stderr
    assert re.search(r"device 0: .*device 1: .*device 2: ", err), f"progress line per device: {err[-500:]}"


def test_three_workers_progress_reaches_the_end(three_workers):
    assert "[8/8] done" in three_workers["result"].stderr, "progress reaches 8/8"


def test_three_workers_print_the_table(three_workers):
    assert "fused" in three_workers["result"].stdout, "the table is printed"


def test_killed_worker_costs_only_its_problem(ab):
    # A worker killed on problem 3: that problem's rows fail with the reason, every other row completes.
    r = ab(*GRID, "--quiet", "--devices=0,1", "--json=killed.json", env={"ATTNBENCH_INJECT_WORKER_KILL": "3"})
    assert r.returncode == 1, f"killed worker (rc={r.returncode}): {(r.stdout + r.stderr)[-2000:]}"
    same("one.json", "killed.json", 3)


def test_sticky_fault_resumes_in_a_fresh_worker(ab):
    # A sticky fault breaking the context: the rest of the problem resumes in a fresh worker, as in one process.
    fault = {"ATTNBENCH_INJECT_FAULT": "head_batched"}
    ab(*GRID, "--quiet", "--json=fault1.json", env=fault)
    r = ab(*GRID, "--quiet", "--devices=3,5", "--json=fault2.json", env=fault)
    assert r.returncode == 1, f"sticky fault with two workers (rc={r.returncode}): {(r.stdout + r.stderr)[-2000:]}"
    a, b = load("fault1.json")["results"], load("fault2.json")["results"]
    st = lambda rows: [(x["strategy"], x["status"]) for x in rows]
    assert st(a) == st(b), (st(a), st(b))
    assert sum(x["status"] == "failed" for x in b) == 8 and {x["device"] for x in b} <= {3, 5}


MIXED = {"ATTNBENCH_INJECT_DEVICE_MODEL": "1:another-cpu"}


def test_different_models_refused(ab):
    # Different models: refused with one line and no report; allowed (and said) with --mixed_devices.
    assert_one_line_error(ab(*GRID, "--devices=0,1", "--json=mixed.json", env=MIXED), 2, "different models (0: ")


def test_refused_mixed_run_leaves_no_report(ab):
    assert not os.path.exists("mixed.json"), "a refused mixed run left a report"


def test_mixed_devices_runs_and_warns(ab):
    r = ab(*GRID, "--quiet", "--devices=0,1", "--mixed_devices", "--json=mixed.json", env=MIXED)
    assert r.returncode == 0, f"--mixed_devices: {r.stderr[-2000:]}"
    warnings = load("mixed.json")["warnings"]
    assert any("different GPU models" in w for w in warnings), warnings


# Bad input: one line, exit 2, nothing written.
BAD = [
    ("--devices: device 1 is named twice", ["--devices=1,1"]),
    ("--devices: 'x'", ["--devices=0,x"]),
    ("--device and --devices", ["--device=0", "--devices=0,1"]),
    ("--head_dim", ["--head_dim=0", "--devices=0,1"]),
    ("--timer=graph", ["--timer=graph", "--devices=0,1"]),
]


@pytest.mark.parametrize("needle,args", BAD, ids=[" ".join(a) for _, a in BAD])
def test_bad_devices_input(ab, needle, args):
    assert_one_line_error(ab(*GRID, *args, "--json=bad.json"), 2, needle)


def test_bad_input_leaves_no_report(ab):
    assert not os.path.exists("bad.json"), "bad input left a report"


def tune_keys(path):
    d = load(path)
    return sorted(k + " " + e["key"] for k in ("gemm", "fused") for e in d[k])


@pytest.fixture(scope="module")
def tunes():
    return {}


def test_three_worker_tune_gives_the_one_process_cache(ab, tunes):
    # tune over three workers: one cache with the entries a one-process tune finds.
    r1 = ab(*TUNE, "--cache=c1.json")
    assert r1.returncode == 0, f"one-process tune: {(r1.stdout + r1.stderr)[-1000:]}"
    r3 = ab(*TUNE, "--devices=0,1,2", "--cache=c3.json")
    tunes["t3"] = r3.stdout + r3.stderr
    assert r3.returncode == 0, f"three-worker tune: {tunes['t3'][-1000:]}"
    assert os.path.getsize("c3.json") > 0 and tune_keys("c1.json") == tune_keys("c3.json"), \
        f"tune caches differ: {tune_keys('c1.json')} vs {tune_keys('c3.json')}"


def test_three_worker_tune_summary(tunes):
    t3 = tunes["t3"]
    assert "from 3 device(s)" in t3 and "device 2:" in t3, f"tune summary: {t3}"


def test_trace_is_one_timeline_of_parent_and_workers(ab, in_module_work):
    """ATTNBENCH_TRACE=FILE: the parent and each worker append their phases to one file, in wall-clock order per
    process; the pool's phases come in their order, each worker's task lines pair up, and the parent exits last."""
    trace = in_module_work / "trace.txt"
    r = ab(*GRID, "--quiet", "--devices=0,1", "--json=traced.json", env={"ATTNBENCH_TRACE": str(trace)})
    assert r.returncode == 0, r.stderr
    assert "attnbench trace:" not in r.stderr  # a file was named: nothing on stderr
    lines = [re.match(r"attnbench trace: (\d+\.\d{3}) \+(\d+\.\d{3}) pid (\d+): (.*)$", l) for l in trace.read_text().splitlines()]
    assert lines and all(lines), trace.read_text()
    by_pid = {}
    for m in lines:
        by_pid.setdefault(m[3], []).append((float(m[1]), float(m[2]), m[4]))
    assert len(by_pid) == 3, by_pid.keys()  # the parent and two workers
    for events in by_pid.values():
        assert [e[1] for e in events] == sorted(e[1] for e in events)
        assert events[0][2].startswith("start: ") and events[-1][2] == "exit 0", events
    parent = next(e for e in by_pid.values() if any(x[2].startswith("pool:") for x in e))
    pool = [x[2] for x in parent if x[2].startswith("pool:")]
    assert pool == ["pool: 2 workers spawned", "pool: every worker ready", "pool: every task has its outcome",
                    "pool: every worker exited"], pool
    tasks = 0
    for events in by_pid.values():
        if events is parent:
            continue
        phases = [x[2] for x in events]
        assert re.fullmatch(r"worker [01]: ready", phases[1]) and "no more tasks" in phases[-2], phases
        begins = [p.split()[3] for p in phases if p.endswith("begins") and p.startswith("worker")]
        ends = [p.split()[3] for p in phases if p.endswith("ends") and p.startswith("worker")]
        assert begins == ends and begins, phases
        tasks += len(begins)
        assert parent[-1][0] >= events[-1][0]  # the parent waits for its workers
    assert tasks == 8  # the grid's 8 problems, each run by one worker


def test_no_pool_directory_left(in_module_work):
    left = os.listdir(in_module_work / "tmp")
    assert not left, f"a pool directory was left: {left}"
