"""The binary's basic surface: --help, --version, list, the CPU notice under --backend=auto without a GPU, a
verified grid run whose JSON report is complete, and a run from a suite file."""
import glob
import json
import re

from cli_helpers import run


def test_help_lists_flags(attnbench, work):
    r = run(attnbench, "--help")
    assert "--seq_len" in r.stdout + r.stderr and "--kv_layout" in r.stdout + r.stderr


def test_version(attnbench, work):
    r = run(attnbench, "--version")
    assert re.search(r"^attnbench [0-9]", r.stdout + r.stderr, re.M)


def test_list_shows_strategies_and_backends(attnbench, work):
    out = run(attnbench, "list").stdout
    assert "ptr_array" in out and "fully_batched" in out
    assert re.search(r"^backends", out, re.M) and re.search(r"^devices", out, re.M)


def test_auto_falls_back_to_cpu_with_one_notice(attnbench, work):
    if "cuda:" in run(attnbench, "list").stdout:
        return  # a GPU is here: auto picks it, nothing to fall back from
    r = run(attnbench, "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused")
    assert r.stderr.count("CPU reference backend") == 1 and "not GPU times" in r.stderr


def test_grid_run_report_is_complete_and_verified(attnbench, work):
    r = run(attnbench, "--backend=cpu", "--quiet", "--batch=1,2", "--heads=2", "--seq_len=24:48:*2", "--head_dim=16",
            "--pages=3", "--kv_layout=paged", "--causal", "--verify", "--json=r.json")
    assert r.returncode == 0, r.stderr
    for name in ("nested", "ptr_array", "fused"):
        assert name in r.stdout
    report = json.load(open("r.json"))
    assert report["schema"] == "attnbench.report/1"
    assert report["device"]["backend"] == "cpu"
    assert len(report["results"]) == 2 * 2 * 5
    for x in report["results"]:
        assert x["status"] == "ok", x
        assert x["verify"]["passed"] and x["verify"]["rel_l2_err"] < 5e-3
        assert x["launches"]["match"], x["launches"]
        assert x["time_ms"]["samples"] >= 1 and x["time_ms"]["median"] > 0
        assert x["problem"]["kv_layout"] == "paged" and x["problem"]["causal"]


def test_a_suite_runs(attnbench, src, work):
    r = run(attnbench, "--backend=cpu", "--quiet", f"--config={src}/tests/data/small-suite.json",
            "--strategies=head_batched,fused", "--verify", "--json=ci.json")
    assert r.returncode == 0, r.stderr
    assert len(json.load(open("ci.json"))["results"]) >= 2 * 9


def test_non_utf8_argument_still_gives_a_report(attnbench, work):
    # A command line that is not UTF-8 (here the report path) is recorded with replacement characters, and the
    # report is still written whole.
    odd = b"r\xe9.json"
    import subprocess
    p = subprocess.run([attnbench.encode(), b"--backend=cpu", b"--quiet", b"--batch=1", b"--heads=1", b"--seq_len=16",
                        b"--head_dim=8", b"--strategies=fused", b"--json=" + odd], capture_output=True)
    assert p.returncode == 0, p.stderr
    json.load(open(odd, "rb"))
    assert not glob.glob("*.tmp.*")
