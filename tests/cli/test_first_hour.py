"""What a new user meets in the first hour (issue 49), through the real binary: a successful run leaves only the
files asked for; ..."""
import os

from cli_helpers import run

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
