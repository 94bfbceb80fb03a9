"""The grid subcommand and the shared run/tune flags through the real binary: the expanded grid as text and
JSON (labels, keys and suites from the one axis table), and every flag that conflicts with another or
cannot take effect refused with one line and exit 2."""
import json

import pytest

from cli_helpers import expect_exit, run

TINY = ["--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused",
        "--warmup=0"]
SMALL = [*TINY, "--max_samples=1"]
# grid --format=json gives each problem its label and key, and the FLOPs and bytes every row's TFLOP/s and GB/s
# divide: derived, so neither in the key nor in a report row's problem.
DERIVED = ("label", "key", "flops", "bytes")


def test_grid_text(attnbench, work):
    # grid: text is one label a line, in the run's order; json carries the problem fields, label and key.
    r = run(attnbench, "grid", "--batch=1,2", "--heads=1", "--seq_len=16:32:*2", "--head_dim=8", "--causal")
    assert r.returncode == 0, f"grid text failed: {r.stderr}"
    assert r.stdout.rstrip("\n") == ("B=1 H=1 S=16 D=8 P=1 contiguous fp16 causal\n"
                                     "B=1 H=1 S=32 D=8 P=1 contiguous fp16 causal\n"
                                     "B=2 H=1 S=16 D=8 P=1 contiguous fp16 causal\n"
                                     "B=2 H=1 S=32 D=8 P=1 contiguous fp16 causal"), f"grid text: {r.stdout}"


def test_grid_json(attnbench, work):
    r = run(attnbench, "grid", "--batch=1", "--heads=2", "--seq_len=100", "--head_dim=8", "--page_size=16",
            "--kv_layout=paged", "--dtype=fp16,bf16", "--causal=false,true", "--json=-")
    assert r.returncode == 0, f"grid json failed: {r.stderr}"
    g = json.loads(r.stdout)
    assert len(g) == 4, len(g)
    p = g[0]
    assert p["label"] == "B=1 H=2 S=100 D=8 P=7 ps=16 paged fp16", p["label"]
    assert p["pages"] == 7 and p["page_size"] == 16 and p["pages_requested"] == 7 and p["causal"] is False
    assert json.loads(p["key"]) == {k: v for k, v in p.items() if k not in (*DERIVED, "pages_requested")}, p
    assert [x["dtype"] for x in g] == ["fp16", "fp16", "bf16", "bf16"] and [x["causal"] for x in g] == [False, True] * 2


def test_grid_of_a_suite_is_what_a_run_measures(attnbench, src, work):
    # The grid of a suite is exactly the problems a run of it measures.
    r = run(attnbench, "grid", f"--config={src}/tests/data/tiny-suite.json", "--json=-")
    assert r.returncode == 0, f"grid --config failed: {r.stderr}"
    g = json.loads(r.stdout)
    r = run(attnbench, "--backend=cpu", "--quiet", f"--config={src}/tests/data/tiny-suite.json", "--strategies=fused",
            "--max_samples=1", "--warmup=0", "--json=run.json")
    assert r.returncode == 0, f"run of the tiny suite failed: {r.stderr}"
    rows = json.load(open("run.json"))["results"]
    assert [{k: v for k, v in p.items() if k not in DERIVED} for p in g] == [row["problem"] for row in rows], \
        "grid --config differs from the run's problems"


def test_grid_defaults(attnbench, work):
    # The GPU's default problem; without a GPU the CPU backend's smaller one (tests/cli/test_first_hour.py).
    gpu = "cuda:" in run(attnbench, "list").stdout
    r = run(attnbench, "grid")
    want = "B=32 H=12 S=512 D=64 P=1 contiguous fp16" if gpu else "B=4 H=12 S=256 D=64 P=1 contiguous fp16"
    assert r.returncode == 0 and r.stdout.rstrip("\n") == want, f"grid defaults: {r.stdout}{r.stderr}"
    assert run(attnbench, "grid", "--batch=32").stdout.rstrip("\n") == "B=32 H=12 S=512 D=64 P=1 contiguous fp16"


@pytest.mark.parametrize("needle,args", [
    ("--batch: 'x' is not a number", ["--batch=x"]),
    ("--format", ["--format=yaml"]),
    ("cannot open", ["--config=no_such_suite.json"]),
])
def test_grid_bad_input(attnbench, work, needle, args):
    expect_exit(2, needle, attnbench, "grid", *args)


# Conflicting flags: one line, exit 2, for run, tune and grid alike.
EXTRA = {"run": ["--backend=cpu", "--quiet"], "tune": ["--cache=c.json", "--backend=cpu", "--quiet"], "grid": []}


@pytest.mark.parametrize("cmd", ["run", "tune", "grid"])
@pytest.mark.parametrize("needle,args", [
    ("excludes", ["--batch=1", "--seq_len=16", "--pages=2", "--page_size=8"]),
])
def test_conflicting_flags(attnbench, work, cmd, needle, args):
    expect_exit(2, needle, attnbench, cmd, *args, *EXTRA[cmd])


def test_size_flags_beside_a_suite_replace_its_axes(attnbench, work):
    # Once "--config excludes --batch": now the flag replaces the axis in every grid of the suite.
    whole = json.loads(run(attnbench, "grid", "--config=ci", "--json=-").stdout)
    four = json.loads(run(attnbench, "grid", "--config=ci", "--batch=4", "--json=-").stdout)
    assert four and all(p["batch"] == 4 for p in four) and len(four) <= len(whole)
    causal = json.loads(run(attnbench, "grid", "--config=ci", "--causal", "--json=-").stdout)
    assert len(causal) == len({p["label"] for p in whole}) and all(p["causal"] for p in causal)



def test_several_suites_in_one_grid(attnbench, work):
    # --config=a,b,c: the suites' problems in that order, one that two suites hold run once (a note says so).
    def grid(config):
        r = run(attnbench, "grid", f"--config={config}", "--json=-")
        assert r.returncode == 0, f"grid --config={config}: {r.stderr}"
        return [p["label"] for p in json.loads(r.stdout)], r.stderr
    dec, _ = grid("llama3.1-8b-decode")
    pre, _ = grid("llama3.1-8b-prefill")
    both, err = grid("llama3.1-8b-decode,llama3.1-8b-prefill")
    assert both == dec + pre and "more than one" not in err, (len(both), err)
    again, err = grid("llama3.1-8b-decode,llama3.1-8b-prefill,llama3.1-8b-decode")
    assert again == both and f"{len(dec)} problems are in more than one of the suites" in err, err
    expect_exit(2, "an empty suite name in the list", attnbench, "grid", "--config=ci,")
    expect_exit(2, "config 'no-such-suite': no suite of that name", attnbench, "grid", "--config=ci,no-such-suite")


REFUSED = [
    # Flags that cannot take effect on the CPU backend.
    ("--timer=graph: the CPU backend has no CUDA graphs", [*SMALL, "--timer=graph"]),
    ("--timer=cupti: the CPU backend has no CUPTI", [*SMALL, "--timer=cupti"]),
    ("--timer=graph: the CPU backend", ["tune", *TINY, "--timer=graph", "--cache=c.json"]),
    ("--device=3: the CPU backend has only device 0", [*SMALL, "--device=3"]),
    ("--device=1: the CPU backend has only device 0", ["tune", *TINY, "--device=1", "--cache=c.json"]),
    # A fused tile without the fused strategy would be ignored: refused.
    ("--tile=m64n64w4s2: only the fused strategy takes a tile", [*SMALL, "--strategies=head_batched",
                                                                 "--tile=m64n64w4s2"]),
    # CLI11 validators keep the one-line errors.
    ("--scores", [*SMALL, "--scores=fp64"]),
    ("--search", ["tune", *TINY, "--search=random", "--cache=c.json"]),
    ("--timer", ["tune", *TINY, "--timer=sundial", "--cache=c.json"]),
    ("--device: must be 0 or more, got -1", [*SMALL, "--device=-1"]),
    ("--max_memory: unknown unit in '8XB'", [*SMALL, "--max_memory=8XB"]),
]


@pytest.mark.parametrize("needle,args", REFUSED, ids=[n for n, _ in REFUSED])
def test_flag_refused(attnbench, work, needle, args):
    expect_exit(2, needle, attnbench, *args)


def test_hot_on_cpu_is_announced(attnbench, work):
    # --hot cannot change a CPU run (no L2 flush there): the run goes on and says so.
    r = run(attnbench, *SMALL, "--hot")
    assert r.returncode == 0 and "note: --hot: the CPU backend has no L2 flush" in r.stderr, \
        f"--hot on the CPU backend: {r.stderr}"


def test_causal_false(attnbench, work):
    # --causal alone is still "true", --causal=false still false; a list runs both.
    r = run(attnbench, "grid", "--batch=1", "--seq_len=16", "--head_dim=8", "--causal=false")
    assert r.returncode == 0 and "causal" not in r.stdout + r.stderr, f"--causal=false: {r.stdout + r.stderr}"


def test_causal_list_runs_both(attnbench, work):
    r = run(attnbench, "grid", "--batch=1", "--seq_len=16", "--head_dim=8", "--causal=false,true")
    out = r.stdout + r.stderr
    assert r.returncode == 0 and len([line for line in out.split("\n") if line]) == 2, f"--causal=false,true: {out}"
