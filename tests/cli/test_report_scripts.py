"""The report scripts end to end without a GPU: peer_torch.py --dry-run and --merge into a report the tool
wrote, tune_repro.py, plot_report.py (when matplotlib is installed) and ci-perf.sh on the CPU backend, read back through
`attnbench report` and `attnbench compare`.

The tests run in order in one scratch folder: the first run's report (r.json), the dry run's (p.json) and a cache
that is not a report (cache.json) are read by later tests."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest


def expect_rc(want, *args, env=None):
    """Runs args with stderr joined to stdout (as `>out.txt 2>&1`), asserts the exit code, returns the output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    r = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", env=full_env, timeout=300)
    tail = "\n".join(r.stdout.splitlines()[-5:])
    assert r.returncode == want, f"exit {r.returncode}, want {want}: {' '.join(map(str, args))}\n{tail}"
    return r.stdout


def rows(path):
    return len(json.load(open(path))["results"])


@pytest.fixture(autouse=True)
def attnbench_env(attnbench, monkeypatch):
    monkeypatch.setenv("ATTNBENCH", attnbench)  # peer_torch.py asks the binary to expand its grids


@pytest.fixture
def peer(src):
    return [sys.executable, str(src / "scripts/peer_torch.py")]


@pytest.fixture
def repro(src):
    return [sys.executable, str(src / "scripts/tune_repro.py")]


def test_a_report_to_read(attnbench, in_module_work):
    expect_rc(0, attnbench, "--backend=cpu", "--batch=1", "--heads=2", "--seq_len=64", "--head_dim=32",
              "--max_time=0.05", "-q", f"--json={in_module_work}/r.json")


def test_peer_dry_run(attnbench, peer, in_module_work):
    w = in_module_work
    # peer_torch.py: a dry run writes one unsupported row per (problem, backend) in the report schema.
    expect_rc(0, *peer, "--dry-run", "-q", "--batch=1,2", "--seq_len=64:256:*2", "--head_dim=32", "--json", w / "p.json")
    # Five backends each (flash, cudnn, efficient, math, unfused; gqa-packed plans decode shapes only).
    assert rows(w / "p.json") == 30, f"dry run: {rows(w / 'p.json')} rows, want 2*3*5=30"
    out = expect_rc(0, attnbench, "report", w / "p.json")
    assert "peer:torch-cudnn" in out, "output lacks 'peer:torch-cudnn'"
    assert "no CUDA device" in out, "output lacks 'no CUDA device'"
    out = expect_rc(0, attnbench, "report", w / "p.json", "--csv=-")
    assert sum(",unsupported," in line for line in out.splitlines()) == 30, "csv of the dry run"


def test_peer_flex_runs_the_variants_sdpa_refuses(attnbench, peer, in_module_work):
    w = in_module_work
    # FlexAttention (--backends=all adds flex): the SDPA backends refuse soft-capping and sinks, naming flex; flex's
    # row is refused only for want of a GPU here; its planned call has the cap's score_mod and the sinks' lse.
    out = expect_rc(0, *peer, "--dry-run", "--batch=1", "--heads=4", "--kv_heads=2", "--seq_len=64", "--q_len=8",
                    "--head_dim=32", "--causal=true", "--window=8", "--softcap=30", "--sinks=true", "--backends=all",
                    "--json", w / "flex.json", env={"ATTNBENCH": attnbench})
    assert "score_mod cap*tanh(s/cap), cap 30" in out and "sigmoid(lse - sink[h])" in out, out
    rows_ = {r["strategy"]: r for r in json.load(open(w / "flex.json"))["results"]}
    assert set(rows_) == {f"peer:torch-{b}" for b in ("flash", "cudnn", "efficient", "math", "unfused", "gqa-packed",
                                                       "flex")}, sorted(rows_)
    for name, r in rows_.items():
        assert r["status"] == "unsupported", r
        if name == "peer:torch-flex":
            assert "soft-capping" not in r["reason"] and "sinks" not in r["reason"], r
        else:
            assert "soft-capping" in r["reason"] and "--backends=flex" in r["reason"], r
    # Without --backends the default list leaves flex out (it compiles a kernel per problem).
    expect_rc(0, *peer, "--dry-run", "-q", "--batch=1", "--seq_len=64", "--head_dim=32", "--json", w / "noflex.json",
              env={"ATTNBENCH": attnbench})
    assert "peer:torch-flex" not in {r["strategy"] for r in json.load(open(w / "noflex.json"))["results"]}


def test_peer_refuses_a_mixed_batch_under_its_own_problem(attnbench, peer, in_module_work):
    # A mixed batch (--q_lens) merged: every PyTorch row keeps the report's problem (its query counts) and says why
    # it is not run, instead of timing the batch as if every sequence had q_len queries.
    w = in_module_work
    expect_rc(0, attnbench, "--backend=cpu", "--batch=3", "--heads=2", "--seq_len=64", "--q_lens=list:1,8,3",
              "--head_dim=32", "--causal", "--strategies=fused", "--max_time=0.02", "-q", f"--json={w}/mixed.json")
    expect_rc(0, *peer, "--dry-run", "-q", "--merge", w / "mixed.json", env={"ATTNBENCH": attnbench})
    results = json.load(open(w / "mixed.json"))["results"]
    peers = [r for r in results if r["strategy"].startswith("peer:")]
    assert peers and all(r["status"] == "unsupported" and "mixed batch" in r["reason"] for r in peers), peers
    assert all(r["problem"]["q_lens_values"] == [1, 8, 3] for r in peers), peers
    out = expect_rc(0, attnbench, "report", w / "mixed.json")
    assert out.count("qlens=list[3]") == 1, out  # one problem: the peers' rows sit under attnbench's


def test_peer_merge_is_idempotent(attnbench, peer, in_module_work):
    w = in_module_work
    # --merge appends peers for the report's own shapes, once, however often it runs.
    shutil.copy(w / "r.json", w / "m.json")
    expect_rc(0, *peer, "--dry-run", "-q", "--merge", w / "m.json")
    expect_rc(0, *peer, "--dry-run", "-q", "--merge", w / "m.json")
    assert rows(w / "m.json") == 10, f"merge: {rows(w / 'm.json')} rows, want 5 + 5"
    out = expect_rc(0, attnbench, "report", w / "m.json")
    assert "peer:torch-unfused" in out, "output lacks 'peer:torch-unfused'"
    out = expect_rc(0, attnbench, "compare", w / "r.json", w / "m.json")
    assert "new in the new run (5)" in out, "output lacks 'new in the new run (5)'"


def test_peer_bad_input(peer, in_module_work):
    w = in_module_work
    # Bad input: exit 2 and no report.
    expect_rc(2, *peer, "--dry-run", "--batch=0", "--json", w / "bad.json")
    expect_rc(2, *peer, "--dry-run", "--seq_len=128:64:*2", "--json", w / "bad.json")
    expect_rc(2, *peer, "--dry-run", "--backends=flash,tensorrt", "--json", w / "bad.json")
    expect_rc(2, *peer, "--dry-run", "--merge", w / "does_not_exist.json")
    # Without --json or --merge the table is the output; on a machine without PyTorch every row says why.
    out = expect_rc(0, *peer, "--batch=1", "--backends=flash,unfused")
    assert "peer:torch-unfused" in out, "output lacks 'peer:torch-unfused'"
    open(w / "cache.json", "w").write('{"schema": "attnbench.cache/1"}\n')
    expect_rc(2, *peer, "--dry-run", "--merge", w / "cache.json")
    assert not os.path.exists(w / "bad.json"), "a refused run left bad.json"


def test_scripts_writer_keeps_the_binarys_rules(peer, in_module_work):
    w = in_module_work
    # The scripts' writer (scripts/atomic_file.py) keeps the binary's rules: a read-only target is refused and
    # left as it was, a link to a device is written through and stays a link.
    open(w / "ro.json", "w").write("keep\n")
    os.chmod(w / "ro.json", 0o444)
    expect_rc(2, *peer, "--dry-run", "-q", "--batch=1", "--seq_len=64", "--head_dim=32", "--json", w / "ro.json")
    assert open(w / "ro.json").read() == "keep\n", "a read-only target was replaced"
    os.symlink("/dev/null", w / "null.json")
    expect_rc(0, *peer, "--dry-run", "-q", "--batch=1", "--seq_len=64", "--head_dim=32", "--json", w / "null.json")
    assert os.path.islink(w / "null.json"), "a link to /dev/null was replaced by a file"


def test_plot_report(src, in_module_work):
    w = in_module_work
    # plot_report.py: three figures, PNG and SVG each.
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed: plot_report.py not tested (pip install matplotlib)")
    plot = [sys.executable, str(src / "scripts/plot_report.py")]
    expect_rc(0, *plot, w / "r.json", w / "m.json", "--out", w / "plots", "--prefix", "t")
    for f in ("tflops", "launches", "time"):
        for ext in ("png", "svg"):
            p = w / f"plots/t_{f}.{ext}"
            assert p.exists() and p.stat().st_size > 0, f"plot t_{f}.{ext} missing"
        assert b"PNG" in open(w / f"plots/t_{f}.png", "rb").read(8), f"t_{f}.png is not a PNG"
    expect_rc(0, *plot, w / "r.json", "--out", w / "plots", "--shape", "B=1 H=2 S=64 D=32")
    expect_rc(2, *plot, w / "r.json", "--out", w / "plots", "--shape", "B=999")
    expect_rc(2, *plot, w / "cache.json", "--out", w / "plots")


def test_tune_repro(attnbench, repro, in_module_work):
    w = in_module_work
    # tune_repro.py: a tune's cache against a run with it. The run's times are then set to the tuned times
    # (reproduced, exit 0) and to 10x them (not reproduced, exit 1), since CPU timing is too noisy to assert on.
    grid = ["--backend=cpu", "--batch=1", "--heads=2", "--seq_len=64", "--head_dim=32", "--max_time=0.05", "-q"]
    expect_rc(0, attnbench, "tune", *grid, "--strategies=head_batched,fused", f"--cache={w}/tuned.json")
    expect_rc(0, attnbench, *grid, "--strategies=head_batched,fused", f"--cache={w}/tuned.json",
              f"--json={w}/cached.json")
    cache, rep = json.load(open(w / "tuned.json")), json.load(open(w / "cached.json"))
    best = {"head_batched": min(e["best_ms"] for e in cache["gemm"]), "fused": cache["fused"][0]["best_ms"]}
    for out, scale in ((w / "same.json", 1.0), (w / "slow.json", 10.0)):
        for r in rep["results"]:
            r["time_ms"].update(median=best[r["strategy"]] * scale, noise=0.01)
        json.dump(rep, open(out, "w"))
    out = expect_rc(0, *repro, w / "tuned.json", w / "same.json")
    assert "2 of 2 reproduced within noise" in out, "output lacks '2 of 2 reproduced within noise'"
    out = expect_rc(1, *repro, w / "tuned.json", w / "slow.json", "--md")
    assert "NOT reproduced" in out, "output lacks 'NOT reproduced'"
    assert "| problem | strategy |" in out, "output lacks '| problem | strategy |'"
    # Several reruns, each its own process: their spread joins the bound. At +5% one rerun (±2.8%) is not a
    # reproduction; three at +2/+5/+8% (spread 2.9%, bound ±6.4%) are; three at +5/+8/+11% (+8%, ±6.2%) are not.
    cache, rep = json.load(open(w / "tuned.json")), json.load(open(w / "cached.json"))
    for e in cache["gemm"]:
        e["measured_with"]["best_noise"] = 0.01
    cache["fused"][0]["best_noise"] = 0.01
    json.dump(cache, open(w / "tuned-noise.json", "w"))
    for scale in (1.02, 1.05, 1.08, 1.11):
        for r in rep["results"]:
            r["time_ms"].update(median=best[r["strategy"]] * scale, noise=0.01)
        json.dump(rep, open(w / f"rerun-{scale}.json", "w"))
    out = expect_rc(1, *repro, w / "tuned-noise.json", w / "rerun-1.05.json")
    assert "NOT reproduced" in out, "output lacks 'NOT reproduced'"
    out = expect_rc(0, *repro, w / "tuned-noise.json", w / "rerun-1.02.json", w / "rerun-1.05.json",
                    w / "rerun-1.08.json")
    assert "2 of 2 reproduced within noise" in out, "output lacks '2 of 2 reproduced within noise'"
    assert "2.9%" in out, "output lacks '2.9%'"
    out = expect_rc(1, *repro, w / "tuned-noise.json", w / "rerun-1.05.json", w / "rerun-1.08.json",
                    w / "rerun-1.11.json")
    assert "0 of 2 reproduced within noise" in out, "output lacks '0 of 2 reproduced within noise'"
    expect_rc(2, *repro, w / "cached.json", w / "tuned.json")
    expect_rc(2, *repro, w / "tuned.json", w / "p.json")  # peer rows only: nothing tuned to match


def test_ci_perf(attnbench, src, in_module_work, monkeypatch):
    w = in_module_work
    # ci-perf.sh on the CPU backend: no baseline -> 2; make one; a baseline doctored 100x faster -> 1;
    # an absurd threshold -> 0.
    if shutil.which("bash") is None:
        pytest.skip("bash not found: scripts/ci-perf.sh is a bash script")
    for k, v in (("BACKEND", "cpu"), ("SUITE", str(src / "tests/data/tiny-suite.json")),
                 ("GATE_FLAGS", "--rounds=3 --min_samples=3 --max_time=0.02")):
        monkeypatch.setenv(k, v)
    ci = ["bash", str(src / "scripts/ci-perf.sh")]
    expect_rc(2, *ci, w / "base.json", w / "ci")
    expect_rc(0, *ci, w / "base.json", w / "ci", env={"UPDATE_BASELINE": "1"})
    assert os.path.isfile(w / "base.json"), "UPDATE_BASELINE wrote no baseline"
    d = json.load(open(w / "base.json"))
    for r in d["results"]:
        if r.get("status") == "ok":
            r["time_ms"].update(median=r["time_ms"]["median"] / 100, noise=0.001, samples=50)
    json.dump(d, open(w / "fast.json", "w"))
    out = expect_rc(1, *ci, w / "fast.json", w / "ci")
    assert "PERFORMANCE REGRESSION" in out, "output lacks 'PERFORMANCE REGRESSION'"
    assert all((w / "ci" / f).exists() and (w / "ci" / f).stat().st_size > 0 for f in ("compare.md", "compare.csv")), \
        "ci-perf wrote no compare.md / compare.csv"
    expect_rc(0, *ci, w / "fast.json", w / "ci", env={"THRESHOLD": "100000%"})
