"""What a new user meets in the first hour (issue 49), through the real binary: a successful run leaves only the
files asked for; suites narrowed by size flags and --where; noise never claimed from one sample; one output
grammar (--json/--md/--csv on every command; the old --format/-o and merge's positional output still read, with
a note); help with one spelling per flag; 'did you mean'; no silent choice (a repeated flag, a lengths file cut
short, the batch taken from the lengths)."""
import json
import os

from cli_helpers import assert_one_line_error, expect_exit, run

TINY = ["--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=16", "--head_dim=8"]


def test_a_successful_run_leaves_only_the_files_asked_for(attnbench, work):
    r = run(attnbench, *TINY, "--json=r.json", "--csv=r.csv")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir()) == ["r.csv", "r.json"], os.listdir()
    r = run(attnbench, "tune", *TINY, "--strategies=fused", "--cache=c.json")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir()) == ["c.json", "r.csv", "r.json"], os.listdir()


def test_resume_keeps_its_journal(attnbench, work):
    # --resume asks for a journal that lasts: a requeued job whose work is done finds it done.
    r = run(attnbench, *TINY, "--json=r.json", "--resume")
    assert r.returncode == 0 and os.path.exists("r.json.journal"), r.stderr
    again = run(attnbench, *TINY, "--json=r.json", "--resume")
    assert again.returncode == 0 and "1 problem(s) already done" in again.stderr, again.stderr


def test_a_suite_narrowed_by_a_size_flag_and_where(attnbench, work):
    whole = json.loads(run(attnbench, "grid", "--config=llama3.1-8b-decode", "--json=-").stdout)
    assert len(whole) > 10 and len({p["batch"] for p in whole}) > 2
    one = json.loads(run(attnbench, "grid", "--config=llama3.1-8b-decode", "--batch=1", "--json=-").stdout)
    assert one and all(p["batch"] == 1 for p in one)
    # the same shapes, each once, at batch 1 (a ragged suite entry keeps its lengths: they set no batch here)
    assert len({p["label"] for p in one}) == len(one)
    small = json.loads(run(attnbench, "grid", "--config=llama3.1-8b-decode", "--where=batch<=8",
                           "--where=kv_layout=paged", "--json=-").stdout)
    assert small == [p for p in whole if p["batch"] <= 8 and p["kv_layout"] == "paged"]
    expect_exit(2, "no axis 'bach'", attnbench, "grid", "--config=llama3.1-8b-decode", "--where=bach<3")
    expect_exit(2, "no problem of the grid satisfies", attnbench, "grid", "--config=llama3.1-8b-decode",
                "--where=batch>100000")
    expect_exit(2, "kv_layout is not a number", attnbench, "grid", "--where=kv_layout<3")


def test_one_sample_claims_no_noise(attnbench, work):
    r = run(attnbench, *TINY, "--strategies=fused", "--min_samples=1", "--max_samples=1", "--json=r.json")
    assert r.returncode == 0, r.stderr
    row = json.load(open("r.json"))["results"][0]
    assert row["time_ms"]["noise"] is None and row["noise_met"] is False and row["stop_reason"] == "max_samples", row
    table = run(attnbench, "report", "r.json").stdout
    assert " -~ " in table, table


def test_one_output_grammar(attnbench, work):
    assert run(attnbench, *TINY, "--strategies=fused", "--json=r.json").returncode == 0
    for form in ("json", "md", "csv"):
        new = run(attnbench, "report", "r.json", f"--{form}=-")
        old = run(attnbench, "report", "r.json", f"--format={form}")
        assert new.returncode == 0 and new.stderr == "" and new.stdout, new.stderr
        assert old.stdout == new.stdout and "old spelling of --" + form in old.stderr, old.stderr
        assert run(attnbench, "report", "r.json", f"--{form}=out.{form}").returncode == 0
        assert open(f"out.{form}").read() == new.stdout
    assert run(attnbench, "report", "r.json", "--format=text").returncode == 0  # text: the console form
    listed = run(attnbench, "list", "--json=-")
    assert listed.returncode == 0 and json.loads(listed.stdout)["strategies"]
    grid = run(attnbench, "grid", "--batch=1,2", "--json=-")
    assert [p["batch"] for p in json.loads(grid.stdout)] == [1, 2]
    r = run(attnbench, "merge", "r.json", "--json=m.json")
    assert r.returncode == 0 and r.stderr == "" and json.load(open("m.json"))["results"], r.stderr
    r = run(attnbench, "merge", "m2.json", "r.json")
    assert r.returncode == 0 and "old spelling of merge IN... --json=OUT" in r.stderr and os.path.exists("m2.json")
    expect_exit(2, "--format=md: this command writes the console form, or --json=FILE", attnbench, "list",
                "--format=md")


def test_help_one_spelling_and_did_you_mean(attnbench, work):
    text = run(attnbench, "--help").stdout
    assert "--seq_len" in text and "--seq-len" not in text and "Excludes" not in text
    assert run(attnbench, "--seq-len=16", "grid").returncode == 0  # the twin still parses
    expect_exit(2, "unknown command 'lst'; did you mean 'list'?", attnbench, "lst")
    expect_exit(2, "unknown flag '--batchh'; did you mean '--batch'?", attnbench, "grid", "--batchh=3")
    expect_exit(2, "attnbench compare needs NEW (usage: attnbench compare BASE NEW", attnbench, "compare", "a.json")


def test_no_silent_choice(attnbench, work):
    r = run(attnbench, "grid", "--batch=3", "--batch=4")
    assert r.stdout.startswith("B=4 ") and "--batch given 2 times; the last, '4', is used" in r.stderr, r.stderr
    open("lens.txt", "w").write("100\n200\n300\n")
    r = run(attnbench, "grid", "--kv_lens=file:lens.txt", "--q_len=1")
    assert r.returncode == 0 and r.stdout.startswith("B=3 "), r.stderr
    assert "batch 3 is the number of lengths" in r.stderr
    r = run(attnbench, "grid", "--kv_lens=file:lens.txt", "--q_len=1", "--batch=2")
    assert r.returncode == 0 and r.stdout.startswith("B=2 ") and "holds 3 lengths; batch 2 takes the first 2" in r.stderr
    r = run(attnbench, "grid", "--kv_lens=list:5,6,7", "--q_len=1")
    assert r.returncode == 0 and r.stdout.startswith("B=3 "), r.stderr


def test_without_a_gpu_the_default_problem_shrinks(attnbench, work):
    if "cuda:" in run(attnbench, "list").stdout:
        return  # a GPU is here: the GPU default runs
    r = run(attnbench, "grid")
    assert r.stdout == "B=4 H=12 S=256 D=64 P=1 contiguous fp16\n", r.stdout
    assert "no GPU: the CPU reference backend runs a smaller default problem" in r.stderr
    assert run(attnbench, "grid", "--batch=32").stdout.startswith("B=32 H=12 S=512 ")  # a size flag: as given


def test_ctrl_c_stops_the_cpu_backend_within_a_second(attnbench, work):
    # The fp64 reference of the GPU-sized problem takes about 40 s on 2 cores: Ctrl-C used to wait for it.
    import signal
    import subprocess
    import time
    p = subprocess.Popen([attnbench, "--backend=cpu", "--batch=32", "--verify", "--json=r.json"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    # 1 s is the aim (0.14-0.17 s on 2 idle cores); the bound leaves room for a loaded machine, and under the
    # sanitizers (scripts/sanitize.sh sets ASAN_OPTIONS) for LeakSanitizer's scan of the heap at exit. It was 40 s.
    bound = 30 if "ASAN_OPTIONS" in os.environ else 5
    assert p.returncode == 130 and took < bound, f"exit {p.returncode} after {took:.1f} s: {err[-300:]}"
    assert json.load(open("r.json"))["interrupted"] == "SIGINT"


def test_dry_run_prints_the_grid_with_an_estimate(attnbench, work):
    r = run(attnbench, "--backend=cpu", "--config=llama3.1-8b-decode", "--where=batch<=8", "--dry_run", "--verify",
            "--json=r.json")
    assert r.returncode == 0, r.stderr
    labels = run(attnbench, "grid", "--config=llama3.1-8b-decode", "--where=batch<=8").stdout.split("\n")[:-1]
    for label in labels:
        assert label in r.stdout
    last = r.stdout.strip().splitlines()[-1]
    assert f"{len(labels)} problem(s)" in last and "estimated" in last, last
    assert os.listdir() == [], os.listdir()  # nothing measured, nothing written
    expect_exit(2, "--dry_run estimates one plain run", attnbench, "--backend=cpu", "--batch=1", "--dry_run",
                "--devices=0,1")
