"""tune --devices with --search=exhaustive splits a problem's search below the problem (docs/scale-out-devices.md,
"A tune split below the problem"), with the real binary on the CPU backend. ATTNBENCH_INJECT_CPU_GEMM_VARIANTS=9
gives each GEMM shape 9 candidates (variant 6 the one clear winner) and --split_candidates=3 three screening
units per shape: both workers screen each shape, the units are counted on the progress line, the cache holds the
winners a one-process tune finds with the same seed, and a worker killed on one screening unit costs only that
unit's candidates (reported, exit 1) while the rest of the tune completes. Each measurement takes the median of 7
samples of about 0.25 ms: with 3, a one-process tune in a CI run on a 2-core machine, with a compiler running
beside it, once chose an 8-repeat variant for one shape.

The tests run in order in one scratch folder, whose tmp/ is every run's TMPDIR (the last test checks that no
worker pool's folder is left there)."""
import json
import os
import re

import pytest

from cli_helpers import expect_exit, run

TUNE = ["tune", "--backend=cpu", "--batch=1", "--heads=2", "--kv_heads=1", "--seq_len=40,57", "--head_dim=32",
        "--search=exhaustive", "--strategies=head_batched,fully_batched", "--warmup=0", "--min_samples=7",
        "--max_time=0.05", "--seed=7"]


@pytest.fixture
def env(in_module_work):
    tmp = in_module_work / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp), "ATTNBENCH_INJECT_CPU_GEMM_VARIANTS": "9"}


def winners(path):
    """What a cache chose: "key -> label candidates failed", one line per GEMM entry, sorted."""
    d = json.load(open(path))
    return [f'{e["key"]} -> {e["algo"]["label"]} {e["candidates"]} {e["failed"]}'
            for e in sorted(d["gemm"], key=lambda e: e["key"])]


def test_split_tune_matches_one_process(attnbench, env, in_module_work):
    one = run(attnbench, *TUNE, "--quiet", "--cache=one.json", env=env)
    assert one.returncode == 0, f"one-process tune: {(one.stdout + one.stderr)[-500:]}"
    two = run(attnbench, *TUNE, "--devices=0,1", "--split_candidates=3", "--cache=two.json", env=env)
    assert two.returncode == 0, f"split tune over two workers (rc={two.returncode}): {two.stderr[-500:]}"
    one_win, two_win = winners("one.json"), winners("two.json")
    assert len(one_win) == 4 and one_win == two_win, \
        f"the split tune's winners differ from one process's: {one_win} vs {two_win}"
    assert two_win and all("-> cpu-variant 6 x1 9 0" in w for w in two_win), \
        f"every shape's 9 candidates screened and variant 6 won: {two_win}"
    # 4 listing units (2 problems x 2 strategies), 4 shapes x 3 screening units, 4 finishing units (one per problem
    # and strategy).
    assert "[20/20] done" in two.stderr, f"progress counts the 20 units: {two.stderr[-300:]}"
    n = len(re.findall(r"^device [01]:$", two.stdout, re.M))
    assert n == 4, f"a summary per finishing unit: {n}"
    assert "nothing was tuned" in two.stdout and "2 plan groups reused a shape tuned earlier" in two.stdout, \
        f"fully_batched's finishing unit leaves the shapes it shares to head_batched's: {two.stdout}"
    # Each shape in 3 units; which worker takes which unit depends on timing (a problem's finishing units go
    # ahead of the queued screens), but with 12 screening units over two workers some shape is shared.
    n = len(re.findall(r"^.*candidates screened in 3 units on device\(s\) [01](, [01])?$", two.stdout, re.M))
    shared = len(re.findall(r"^.*candidates screened in 3 units on device\(s\) 0, 1$", two.stdout, re.M))
    assert n == 4 and shared >= 1, f"every shape in 3 units ({n}), some over both workers ({shared}): {two.stdout}"


def test_killed_worker_costs_only_its_unit(attnbench, env, in_module_work):
    # A worker killed on unit 5 (problem 0's first shape, candidates 3-5): only those candidates are lost.
    r = run(attnbench, *TUNE, "--quiet", "--devices=0,1", "--split_candidates=3", "--cache=killed.json",
            env={**env, "ATTNBENCH_INJECT_WORKER_KILL": "5"})
    out = r.stdout + r.stderr
    assert r.returncode == 1, f"a killed worker makes the tune exit 1 (rc={r.returncode}): {out[-500:]}"
    assert re.search(r"screening unit 5 \(gemm .*candidates 3-5 of 9\) lost: the worker on device [01] died while "
                     r"running it \(killed by signal 9", out), \
        f"the lost unit is reported: {[l for l in out.splitlines() if 'lost' in l.lower()]}"
    won = winners("killed.json")
    assert sum(w.endswith("-> cpu-variant 6 x1 9 3") for w in won) == 1 and \
        sum(w.endswith("-> cpu-variant 6 x1 9 0") for w in won) == 3, \
        f"the other units' candidates still tuned every shape: {won}"


def test_bad_input_and_no_pool_left(attnbench, env, in_module_work):
    # Bad input: one line, exit 2, no cache.
    expect_exit(2, "--split_candidates must be at least 1", attnbench, *TUNE, "--devices=0,1", "--split_candidates=0",
                "--cache=bad.json", env=env)
    assert not os.path.exists("bad.json"), "a refused tune left a cache"
    assert not os.listdir(env["TMPDIR"]), f"a pool directory was left: {os.listdir(env['TMPDIR'])}"
