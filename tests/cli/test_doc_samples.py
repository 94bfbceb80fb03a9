"""Docs that cannot go stale (issue 18): every generated block of README.md and docs/report-format.md equals what
this binary prints for the stored report it names (scripts/doc-samples.sh --check), and every field a report
of this binary writes, and every field of the stored GPU report, is named in docs/report-format.md."""
import json
import re
import shutil

import pytest

from cli_helpers import run


def test_generated_docs_are_current(attnbench, src, work):
    if shutil.which("bash") is None:
        pytest.skip("bash not found: scripts/doc-samples.sh is a bash script")
    r = run(src / "scripts/doc-samples.sh", "--check", env={"ATTNBENCH": attnbench})
    diff = "\n".join((r.stdout + r.stderr).splitlines()[:60])
    assert r.returncode == 0, f"generated docs are stale:\n{diff}"


def keys(v, depth, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            if depth > 1 and k not in ("attrs", "problem"):  # cuBLASLt's own attributes; problem: the axis table's
                keys(x, depth - 1, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, depth, out)
    return out


def test_every_report_field_is_documented(attnbench, src, work):
    # A fresh report with every optional section this binary writes on the CPU: verify, rounds, samples, a slowdown.
    r = run(attnbench, "--backend=cpu", "--batch=2", "--heads=2", "--kv_heads=1", "--seq_len=33", "--q_len=3",
            "--head_dim=32", "--pages=2", "--kv_layout=paged", "--verify", "--rounds=2", "--samples", "--max_time=0.02",
            "--min_samples=2", "-q", "--json=fresh.json", env={"ATTNBENCH_INJECT_SLOWDOWN": "fused=5%"})
    assert r.returncode == 0, f"the fresh CPU report: {r.stderr[-2000:]}"
    doc = open(src / "docs/report-format.md").read()
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", doc)) | set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)":', doc))
    named |= {part for n in list(named) for part in n.split(".")}
    missing = {}
    # The main job's committed report, from whichever card scripts/doc-results.sh last ran on.
    committed = [p for p in sorted((src / "docs/results").glob("*-default.json")) if "-cache-" not in p.name]
    assert len(committed) == 1, f"one committed main-job report, found {committed}"
    for path in ("fresh.json", committed[0]):
        d = json.load(open(path))
        found = keys({k: v for k, v in d.items() if k != "results"}, 2, set()) | keys(d["results"], 4, set())
        lost = sorted(found - named)
        if lost:
            missing[str(path)] = lost
    assert not missing, f"fields written but not named in docs/report-format.md: {missing}"


def test_doc_results_runs_its_lanes_on_several_devices(attnbench, src, work):
    # The smoke run (CPU backend, tiny shapes, a scratch copy of the docs) with DOC_RESULTS_GPUS: the four lanes
    # of steps run at once, two a device here, every step once; a failing step in any lane fails the whole run.
    if shutil.which("bash") is None:
        pytest.skip("bash not found: scripts/doc-results.sh is a bash script")
    env = {"ATTNBENCH": attnbench, "DOC_RESULTS_SMOKE": "1", "DOC_RESULTS_GPUS": "0,1", "TMPDIR": str(work)}
    r = run(src / "scripts/doc-results.sh", env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "-- lane on device 0:" in out and "-- lane on device 1:" in out, out[-3000:]
    steps = ["default", "default-peers", "prefill", "prefill-peers", "decode", "decode-peers", "tune-default",
             "tune-tiles-prefill", "tune-tiles-decode"]
    for s in steps:
        assert len(re.findall(rf"^== {s}: rc=0, ", out, re.M)) == 1, (s, out[-3000:])
    env["DOC_RESULTS_STEP_TIMEOUT"] = "not-a-number"  # every timed step fails (timeout's usage error)
    r = run(src / "scripts/doc-results.sh", env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-3000:]
    assert "FAILED" in out and "prefill (exit" in out and "tune-default (exit" in out, out[-3000:]
