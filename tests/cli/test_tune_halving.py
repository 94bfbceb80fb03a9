"""tune's successive halving (docs/tuning.md, step 3) through the real binary on the CPU backend:
ATTNBENCH_INJECT_CPU_GEMM_VARIANTS=30 gives each GEMM shape 30 candidates (variant 20 the one clear winner),
--halving_final=2 makes the screen halve them. The summary (text and --json), the cache's measured_with and the
header line say how many candidates each stage took; --halving_keep=0 screens as before; under --devices the
screening units halve their own ranges and their stages add up in the finishing unit's record."""
import json

import pytest

from cli_helpers import run

TUNE = ["tune", "--backend=cpu", "--batch=1", "--heads=2", "--seq_len=40", "--head_dim=32", "--search=exhaustive",
        "--strategies=head_batched", "--warmup=0", "--min_samples=7", "--max_time=0.05", "--seed=7",
        "--halving_final=2"]
# Variant 20 runs its GEMM once, the others 8-9 times; on a loaded 2-core machine the re-check of the winner may
# still find it no faster than the heuristic's choice, which then stays (which one wins is tests/cpu's to check,
# on virtual time: test_screen_halving.cpp).
WINNERS = ("cpu-variant 20 x1", "cpu-reference")


@pytest.fixture
def env(in_module_work):
    tmp = in_module_work / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp), "ATTNBENCH_INJECT_CPU_GEMM_VARIANTS": "30"}


def entries(path):
    return sorted(json.load(open(path))["gemm"], key=lambda e: e["key"])


def test_halving_is_recorded_in_the_summary_and_the_cache(attnbench, env, in_module_work):
    r = run(attnbench, *TUNE, "--cache=halved.json", "--json=halved-summary.json", env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert "successive halving (the fastest 0.25 of a stage and any within 3% of it go on, at most 1.5x as many, down to 2)" in r.stderr, \
        r.stderr[-1000:]
    rows = json.load(open("halved-summary.json"))["rows"]
    assert len(rows) == 2, rows
    for row in rows:
        stages = row["stages"]
        kinds = [s["kind"] for s in stages]
        # A halving stage whenever the probe passed more than the final round takes (2 and the heuristic's choice);
        # under AddressSanitizer the variants' extra GEMM calls dominate and the probe's cutoff may pass only those.
        assert kinds[0] == "probe" and kinds[-1] == "final", stages
        assert "halving" in kinds or stages[0]["kept"] <= 3, stages
        assert stages[0]["entered"] == 30 and stages[0]["calls"] == 1, stages[0]
        for before, after in zip(stages, stages[1:]):
            assert after["entered"] == before["kept"], stages
        assert stages[-1]["entered"] <= 3, "the final round: 2, and the heuristic's choice"
        assert row["best"] in WINNERS, row
    for e in entries("halved.json"):
        m = e["measured_with"]
        assert m["halving"] == {"keep": 0.25, "final": 2, "band": 0.03, "band_limit": 1.5}, m
        assert [s["entered"] for s in m["stages"]] == [s["entered"] for s in rows[0]["stages"]] or \
            [s["entered"] for s in m["stages"]] == [s["entered"] for s in rows[1]["stages"]], m["stages"]
        assert e["algo"]["label"] in WINNERS, e["algo"]
    # The text summary: a line per shape with its stages.
    r = run(attnbench, *TUNE, "--cache=halved-text.json", env=env)
    assert r.returncode == 0, r.stderr[-1000:]
    assert "screen stages (candidates in -> going on):" in r.stdout, r.stdout
    lines = [l for l in r.stdout.splitlines() if "(head_batched): probe (1 call) 30 -> " in l]
    assert len(lines) == 2 and all("a screen without halving takes" in l for l in lines), r.stdout


def test_halving_off_screens_every_candidate_within_the_cutoff(attnbench, env, in_module_work):
    r = run(attnbench, *TUNE, "--halving_keep=0", "--cache=full.json", "--json=full-summary.json", env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert "no halving: a 3-sample screen" in r.stderr, r.stderr[-1000:]
    for row in json.load(open("full-summary.json"))["rows"]:
        assert [s["kind"] for s in row["stages"]] == ["probe", "final"], row["stages"]
        assert row["stages"][1]["entered"] == row["stages"][0]["passed"], row["stages"]
        assert row["best"] in WINNERS, row
    for e in entries("full.json"):
        assert e["measured_with"]["halving"] is None, e["measured_with"]


def test_split_units_halve_their_ranges_and_their_stages_add_up(attnbench, env, in_module_work):
    # Units of 10 candidates (more than the final round's 2): each halves its range.
    r = run(attnbench, *TUNE, "--devices=0,1", "--split_candidates=10", "--cache=split.json", env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    for e in entries("split.json"):
        stages = e["measured_with"]["stages"]
        assert stages[0]["kind"] == "probe" and stages[0]["entered"] == 30, stages
        assert stages[-1]["kind"] == "final" and stages[-1]["entered"] <= 3 * 3, stages
        assert stages[0]["kept"] < stages[0]["passed"], f"the units ranked their probes: {stages}"
        assert e["algo"]["label"] in WINNERS, e["algo"]


def test_help_names_the_halving_flags(attnbench):
    r = run(attnbench, "tune", "--help")
    for flag in ("--halving_keep", "--halving_final", "--halving_band", "--halving_band_limit"):
        assert flag in r.stdout, flag


@pytest.mark.parametrize("flag", ["--halving_band_limit=0.5", "--halving_band_limit=-1", "--halving_band_limit=inf",
                                  "--halving_band_limit=nan", "--halving_keep=1.5", "--halving_final=0",
                                  "--halving_band=1"])
def test_bad_halving_flags_are_one_line_and_exit_2(attnbench, work, flag):
    r = run(attnbench, "tune", "--backend=cpu", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", flag)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(lines) == 1 and flag.split("=")[0] in lines[0], (flag, r.returncode, r.stderr)
