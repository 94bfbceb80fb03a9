"""scripts/scale-out-bench.sh, the issue-48 measurements, tried on the CPU backend (two worker processes for two
"GPUs", tiny problems): every step writes its reports and times.tsv, the SIGTERM-halfway run resumes to every row
exactly once, the fleet's merged cache has the one-process tune's entries, the tune without successive halving
(the baseline step) gives the entries the tune's winners are compared with, and scale_out_summary.py renders each
table. Timings on the CPU mean nothing; what is tested is that the script runs the real binary end to end."""
import csv
import json
import os
import re
import subprocess


def test_scale_out_bench_on_the_cpu(attnbench, src, work):
    env = dict(os.environ, SCALE_BACKEND="cpu", SCALE_GPUS="2", ATTNBENCH=attnbench, SCALE_STEP_TIMEOUT="120")
    out = work / "scale"
    r = subprocess.run(["bash", os.path.join(src, "scripts", "scale-out-bench.sh"), str(out), "run", "tune", "baseline",
                        "quiet", "resume", "fleet"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out / "times.tsv") as f:
        times = [(s, int(n), float(w), int(rc)) for s, n, w, rc in csv.reader(f, delimiter="\t")]
    steps = {(s, n): rc for s, n, w, rc in times}
    for want in [("run", 1), ("run", 2), ("tune", 1), ("tune", 2), ("baseline", 2), ("quiet", 1), ("quiet", 2),
                 ("resume", 2), ("fleet", 2), ("fleet", 1)]:
        assert steps.get(want) == 0, f"{want}: {steps}"
    # The two-worker run has the one-worker run's rows, spread over both.
    one, two = (json.load(open(out / f"run-{n}.json")) for n in (1, 2))
    key = lambda d: sorted((json.dumps(x["problem"], sort_keys=True), x["strategy"]) for x in d["results"])
    assert key(one) == key(two) and {x["device"] for x in two["results"]} == {0, 1}
    # Interrupted halfway and resumed: each row once, the uninterrupted run's rows.
    resumed = json.load(open(out / "resume-2.json"))
    assert key(resumed) == key(json.load(open(out / "quiet-2.json"))) and len(set(key(resumed))) == len(key(resumed))
    # The signal came once half the problems were journaled, not before any nor after all; the resume kept them.
    first, again = (out / "resume-summary.txt").read_text().splitlines()[:2]
    done, size = re.search(r"with (\d+) of (\d+) problems journaled", first).groups()
    kept = int(re.search(r"(\d+) problem\(s\) already done", again).group(1))
    assert 1 <= int(done) <= kept < int(size) and 2 * int(done) >= int(size), (first, again)
    # The fleet: the merged cache holds what one process tuned.
    merged = json.load(open(out / "fleet" / "cache.json"))
    alone = json.load(open(out / "fleet" / "one-process.cache.json"))
    for kind in ("gemm", "fused"):
        assert {e["key"] for e in merged[kind]} == {e["key"] for e in alone[kind]}, kind
    # The baseline: the same entries, screened without halving.
    base = json.load(open(out / "tune-baseline.cache.json"))
    tuned = json.load(open(out / "tune-1.cache.json"))
    assert {e["key"] for e in base["gemm"]} == {e["key"] for e in tuned["gemm"]}
    assert all(e["measured_with"]["halving"] is None for e in base["gemm"]), base["gemm"]
    summary = (out / "summary.md").read_text()
    for heading in ("### run:", "### tune --search=exhaustive", "### the tune's winners against the screen without",
                    "### GPU 0 alone", "### SIGTERM halfway", "### Slurm array scripts"):
        assert heading in summary, summary
    assert "0 more than once" in summary and "missing here: 0" in summary, summary
