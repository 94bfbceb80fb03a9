"""Flag values that used to get through (issue 16, finding 8), each refused by run (and tune where it has
the flag) with one line and exit 2 before any work."""
import json
import os

import pytest

from cli_helpers import expect_exit, run

SMALL = ["--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused"]
EXTRA = {"run": [], "tune": ["--cache=c.json"]}

REFUSED = [
    ("--max_time: 'inf' must be a number of seconds above 0", ["--max_time=inf"]),
    ("--max_time: '-1' must be a number of seconds above 0", ["--max_time=-1"]),
    ("--max_time: '0' must be", ["--max_time=0"]),
    ("--max_time: 'nan' must be", ["--max_time=nan"]),
    ("--max_time: '1s' is not a number", ["--max_time=1s"]),
    ("--max_memory: '1e30' is more than 4 EiB", ["--max_memory=1e30"]),
    ("--max_memory: '0.5' is less than one byte", ["--max_memory=0.5"]),
    ("--seed: must be 0 or more, got -1", ["--seed=-1"]),
    ("--max_noise: '200%' is more than 100%", ["--max_noise=200%"]),
    ("--warmup must be between 0 and 10000, got 2147483647", ["--warmup=2147483647"]),
    ("--batch: 1 is listed more than once in '1,1,1'", ["--batch=1,1,1"]),
    ("--batch: 2 is listed more than once", ["--batch=2,1:4:*2"]),
    ("--dtype: 'fp16' is listed more than once", ["--dtype=fp16,bf16,fp16"]),
    ("the grid has problem B=1 H=1 S=10 D=8 P=5 ps=2", ["--seq_len=10", "--pages=5,6"]),
    ("twice", ["--causal", "--seq_len=10", "--pages=5,6"]),
]


# The refusals of run and tune share one folder: the check after them is that tune left no cache behind.
@pytest.mark.parametrize("cmd", ["run", "tune"])
@pytest.mark.parametrize("needle,args", REFUSED, ids=[" ".join(a) for _, a in REFUSED])
def test_bad_value_refused(attnbench, in_module_work, cmd, needle, args):
    expect_exit(2, needle, attnbench, cmd, *SMALL, *EXTRA[cmd], *args)


@pytest.mark.parametrize("cmd", ["run", "tune"])
def test_refusals_leave_no_cache(in_module_work, cmd):
    assert not os.path.exists("c.json"), f"{cmd} left c.json behind"


def test_min_samples_above_max_samples(attnbench, work):
    expect_exit(2, "--min_samples=50 is above --max_samples=10", attnbench, *SMALL, "--min_samples=50",
                "--max_samples=10")


# The CI gate's flag and test hook (docs/ci-gate.md).
@pytest.mark.parametrize("rounds", ["0", "1001"])
def test_rounds_out_of_range(attnbench, work, rounds):
    expect_exit(2, "--rounds must be between 1 and 1000", attnbench, *SMALL, f"--rounds={rounds}")


@pytest.mark.parametrize("spec,needle", [
    ("fast", "ATTNBENCH_INJECT_SLOWDOWN: 'fast' is not a fraction"),
    ("fused=2000%", "ATTNBENCH_INJECT_SLOWDOWN: '2000%' is outside 0 to 1000%"),
])
def test_bad_injected_slowdown(attnbench, work, spec, needle):
    expect_exit(2, needle, attnbench, *SMALL, env={"ATTNBENCH_INJECT_SLOWDOWN": spec})


def test_rounds_and_slowdown_in_the_report(attnbench, work):
    # Rounds through the real binary: every row says how many it ran, and a slowed run says it was slowed.
    r = run(attnbench, *SMALL, "--rounds=4", "--min_samples=3", "--json=r.json",
            env={"ATTNBENCH_INJECT_SLOWDOWN": "fused=10%"})
    assert r.returncode == 0, f"a run with rounds and a slowdown: {r.stderr}"
    report = json.load(open("r.json"))
    row = report["results"][0]
    assert row["rounds"]["count"] == 4 and len(row["rounds"]["medians_ms"]) == 4 and row["rounds"]["kept"] == 1, row
    assert row["injected_slowdown"]["fraction"] == 0.1 and "noise_met" in row, row
    assert report["settings"]["rounds"] == 4 and report["settings"]["injected_slowdown"] == "fused=10%", \
        report["settings"]
    assert any("deliberately slowed" in w for w in report["warnings"]), report["warnings"]


def test_edge_values_still_run(attnbench, work):
    # The edges still run: 100%, the largest warm-up is accepted as a value (not run here), min == max.
    r = run(attnbench, *SMALL, "--max_noise=100%", "--min_samples=2", "--max_samples=2", "--warmup=0",
            "--max_time=0.5")
    assert r.returncode == 0, f"edge values refused: {r.stderr}"
