"""Shards and merge (issue 17, points 2 and 3), with the real binary on the CPU backend: --shard=i/N and the
Slurm and Kubernetes environment defaults split an awkward grid into parts whose union is the grid with no
problem twice; `merge` of the shard reports has exactly the rows of one unsharded run, in grid order; bad
shard specs and merge inputs that do not belong together get one line, exit 2 and no output file; tune
caches of shards merge.

The tests run in order in one scratch folder: the unsharded report and the shards' reports of the first tests are
read by the later ones."""
import json
import os

from cli_helpers import expect_exit, run

# Lengths not a multiple of a page, a short last page, B=1, H=1, one KV head, q_len=1, causal, fp16 and bf16.
AXES = ["--batch=1,2", "--heads=2", "--kv_heads=1", "--seq_len=13,40", "--pages=1,3", "--q_len=1", "--head_dim=8",
        "--causal=false,true", "--dtype=fp16,bf16"]
GRID = ["--backend=cpu", "--quiet", "--no_table", *AXES, "--verify", "--warmup=0", "--min_samples=1",
        "--max_samples=2"]
TUNE_SMALL = ["--backend=cpu", *AXES, "--strategies=fused", "--warmup=0", "--min_samples=1"]
TGRID = ["--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=13,40,64", "--head_dim=8",
         "--strategies=fused,head_batched", "--warmup=0", "--min_samples=1"]


def rows(*paths, ordered=False):
    """One line per row of the reports (problem JSON, strategy, status), sorted unless ordered: the rows' identity,
    for comparing which rows two runs produced (times always differ); as tests/cpu/rows_of.py."""
    lines = []
    for path in paths:
        for r in json.load(open(path))["results"]:
            lines.append(json.dumps(r["problem"], sort_keys=True) + " " + r["strategy"] + " " + r["status"])
    return lines if ordered else sorted(lines)


def test_grid_size(attnbench, in_module_work):
    n = len(json.loads(run(attnbench, "grid", *AXES, "--json=-").stdout))
    assert n == 32, f"grid size {n}, wanted 32"


def test_shards_split_the_grid(attnbench, in_module_work):
    r = run(attnbench, *GRID, "--json=whole.json")
    assert r.returncode == 0, f"unsharded run failed: {r.stderr}"
    # Shard 1 reports another copy bandwidth (a measured rate, which differs from process to process; ctest hands
    # the others a fixed one, tests/CMakeLists.txt): merge must not take it for another device.
    for i in range(3):
        rate = os.environ.get("ATTNBENCH_HOST_COPY_GBPS", "")  # empty: measured
        if i == 1:
            rate = "7.5"
        r = run(attnbench, *GRID, f"--shard={i}/3", f"--json=s{i}.json", env={"ATTNBENCH_HOST_COPY_GBPS": rate})
        assert r.returncode == 0, f"shard {i}/3 failed: {r.stderr}"
    rates = [json.load(open(f"s{i}.json"))["device"]["copy_bandwidth_gbps"] for i in (0, 1)]
    assert rates[1] == 7.5 != rates[0], f"shards 0 and 1 do not report different copy bandwidths: {rates}"
    # Every shard did some work, none the whole grid, no problem twice, and together all of them.
    for i in range(3):
        k = len(rows(f"s{i}.json"))
        assert 0 < k < len(rows("whole.json")), f"shard {i}/3 has {k} rows"
    union = rows("s0.json", "s1.json", "s2.json")
    assert len(set(union)) == len(union), "a row in two shards"
    assert rows("whole.json") == union, "shards' union differs from the grid"
    s = json.load(open("s1.json"))["shard"]
    assert s["index"] == 1 and s["count"] == 3 and s["grid_size"] == 32 and len(s["problems"]) > 0, \
        f"the report header does not record the shard: {s}"


def test_merge_equals_the_unsharded_run(attnbench, in_module_work):
    # merge: the same rows as the unsharded run, in the same (grid) order, from the shards in any order.
    r = run(attnbench, "merge", "--json=merged.json", "s2.json", "s0.json", "s1.json")
    assert r.returncode == 0, f"merge failed: {r.stderr}"
    assert f"merged {len(rows('whole.json'))} rows from 3 report(s)" in r.stdout, f"merge summary: {r.stdout}"
    assert rows("whole.json", ordered=True) == rows("merged.json", ordered=True), \
        "merged rows differ from the unsharded run's"
    d = json.load(open("merged.json"))
    assert "shard" not in d and len(d["merged_from"]) == 3, "merged header"
    r = run(attnbench, "report", "merged.json", "--csv=-")
    assert r.returncode == 0, f"the merged report does not read back: {r.stderr}"
    r = run(attnbench, "compare", "whole.json", "merged.json", "--threshold=1000%")
    assert r.returncode != 2, f"compare refuses the merged report: {r.stderr}"


def test_scheduler_variables_pick_the_shard(attnbench, in_module_work):
    # The schedulers' variables pick the same shards as the flag.
    r = run(attnbench, *GRID, "--json=slurm1.json",
            env={"SLURM_ARRAY_TASK_ID": "11", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "3"})
    assert r.returncode == 0, f"slurm shard: {r.stderr}"
    assert rows("slurm1.json") == rows("s1.json"), "SLURM_ARRAY_TASK_ID=11 (min 10) is not shard 1/3"
    r = run(attnbench, *GRID, "--json=k8s2.json", env={"JOB_COMPLETION_INDEX": "2", "ATTNBENCH_SHARD_COUNT": "3"})
    assert r.returncode == 0, f"k8s shard: {r.stderr}"
    assert rows("k8s2.json") == rows("s2.json"), "JOB_COMPLETION_INDEX=2 is not shard 2/3"
    r = run(attnbench, *GRID, "--shard=0/1", "--json=flagwins.json",
            env={"JOB_COMPLETION_INDEX": "2", "ATTNBENCH_SHARD_COUNT": "3"})
    assert r.returncode == 0, f"--shard=0/1: {r.stderr}"
    assert rows("flagwins.json") == rows("whole.json"), "--shard does not win over the environment"
    r = run(attnbench, "tune", *TUNE_SMALL, "--cache=k8s_cache.json",
            env={"JOB_COMPLETION_INDEX": "0", "ATTNBENCH_SHARD_COUNT": "2"})
    assert r.returncode == 0 and "shard 0/2" in r.stderr, \
        f"tune does not take its shard from JOB_COMPLETION_INDEX: {r.stderr}"


def test_bad_shard_specs(attnbench, in_module_work):
    # Bad shard specs: one line, exit 2, no report.
    expect_exit(2, "--shard=3/3: shard index 3 is out of range", attnbench, *GRID, "--shard=3/3", "--json=no.json")
    expect_exit(2, "is not INDEX/COUNT", attnbench, *GRID, "--shard=one/3", "--json=no.json")
    expect_exit(2, "the shard count must be between", attnbench, *GRID, "--shard=0/0", "--json=no.json")
    expect_exit(2, "ATTNBENCH_SHARD_COUNT is not", attnbench, *GRID, "--json=no.json",
                env={"JOB_COMPLETION_INDEX": "1"})
    expect_exit(2, "out of range", attnbench, *GRID, "--json=no.json",
                env={"JOB_COMPLETION_INDEX": "5", "ATTNBENCH_SHARD_COUNT": "3"})
    expect_exit(2, "SLURM_ARRAY_TASK_COUNT is not", attnbench, *GRID, "--json=no.json",
                env={"SLURM_ARRAY_TASK_ID": "0"})
    expect_exit(2, "--shard=2/2: shard index 2 is out of range", attnbench, "tune", *TUNE_SMALL, "--shard=2/2",
                "--cache=no.json")
    assert not os.path.exists("no.json") and not os.path.exists("no.json.journal"), \
        "a refused run left a file behind"


def test_merge_inputs_that_do_not_belong_together(attnbench, in_module_work):
    # Merge inputs that do not belong together: one line, exit 2, no output.
    r = run(attnbench, *GRID, "--shard=0/3", "--seed=7", "--json=s0_seed7.json")
    assert r.returncode == 0, f"seeded shard: {r.stderr}"
    r = run(attnbench, *GRID, "--shard=0/2", "--json=h0.json")
    assert r.returncode == 0, f"shard 0/2: {r.stderr}"
    expect_exit(2, "different settings (seed", attnbench, "merge", "--json=out.json", "s0_seed7.json", "s1.json", "s2.json")
    expect_exit(2, "both have the row", attnbench, "merge", "--json=out.json", "whole.json", "whole.json")
    expect_exit(2, "are both shard 1/3", attnbench, "merge", "--json=out.json", "s1.json", "s1.json")
    expect_exit(2, "shard 0/2 of a 32-problem grid", attnbench, "merge", "--json=out.json", "s1.json", "h0.json")
    expect_exit(2, "is not a shard report", attnbench, "merge", "--json=out.json", "whole.json", "s1.json")
    expect_exit(2, "also an input", attnbench, "merge", "--json=s0.json", "s0.json", "s1.json")
    expect_exit(2, "is a shard's report; name a new file", attnbench, "merge", "--json=s0.json", "s1.json", "s2.json")
    expect_exit(2, "reports and caches do not merge", attnbench, "merge", "--json=out.json", "s0.json", "k8s_cache.json")
    d = json.load(open("s2.json"))
    d["tool"]["version"] = "0.0.1"
    json.dump(d, open("old.json", "w"))
    expect_exit(2, "different tool versions", attnbench, "merge", "--json=out.json", "s0.json", "s1.json", "old.json")
    d = json.load(open("s2.json"))
    d["interrupted"] = "SIGTERM"
    json.dump(d, open("cut.json", "w"))
    expect_exit(2, "is an interrupted run (SIGTERM)", attnbench, "merge", "--json=out.json", "s0.json", "s1.json", "cut.json")
    d = json.load(open("s2.json"))
    d["device"]["name"] = "Other GPU"
    json.dump(d, open("other.json", "w"))
    expect_exit(2, "numbers of different devices do not compare", attnbench, "merge", "--json=out.json", "s0.json", "s1.json",
                "other.json")
    assert not os.path.exists("out.json"), "a refused merge left out.json"


def test_a_missing_shard_merges_and_says_so(attnbench, in_module_work):
    # A missing shard merges, and says so in the report and on stderr.
    r = run(attnbench, "merge", "--json=part.json", "s0.json", "s2.json")
    assert r.returncode == 0 and "shard(s) 1/3 missing" in r.stderr and \
        "shard(s) 1/3 missing" in open("part.json").read(), f"a missing shard is not reported: {r.stderr}"


def test_tune_caches_of_shards_merge(attnbench, in_module_work):
    # Tune caches: the shards' caches merge into one holding every shard's entries.
    r = run(attnbench, "tune", *TGRID, "--cache=tune_whole.json")
    assert r.returncode == 0, f"tune: {r.stderr}"
    for i in range(2):
        r = run(attnbench, "tune", *TGRID, f"--shard={i}/2", f"--cache=tune_s{i}.json")
        assert r.returncode == 0, f"tune shard {i}: {r.stderr}"
    r = run(attnbench, "merge", "--json=tune_merged.json", "tune_s0.json", "tune_s1.json", "--on_conflict=fastest")
    assert r.returncode == 0, f"cache merge: {r.stderr}"

    def keys(path):
        d = json.load(open(path))
        return sorted(e["key"] for e in d.get("gemm", []) + d.get("fused", []))
    assert keys("tune_whole.json") == keys("tune_merged.json"), \
        f"merged cache keys differ: {keys('tune_whole.json')} vs {keys('tune_merged.json')}"
    r = run(attnbench, *TGRID[:6], "--cache=tune_merged.json", "--no_table")
    assert r.returncode == 0, f"a run does not load the merged cache: {r.stderr}"
    d = json.load(open("tune_s1.json"))
    d["tool"]["version"] = "0.0.1"
    json.dump(d, open("tune_old.json", "w"))
    expect_exit(2, "caches of different tool versions", attnbench, "merge", "--json=tune_out.json", "tune_s0.json",
                "tune_old.json")
