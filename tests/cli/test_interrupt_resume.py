"""Runs that survive interruption (issue 17, point 4), with the real binary on the CPU backend: SIGTERM and
SIGINT stop a run mid-grid, which writes a complete report of the problems that finished, marked
interrupted, and exits 128+signal; `--resume` skips what the journal holds and ends with exactly the rows
of an uninterrupted run; after SIGKILL the journal still holds every finished problem; tune does the same
for its cache; a journal from another command, version or settings is refused (one line, exit 2). A run on
--devices does the same as one process.

Each stage runs in a module fixture in one scratch folder (the tests check what it kept)."""
import collections
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from cli_helpers import assert_one_line_error, expect_exit, run

# 10 problems (a short last page, B=1, H=1, one KV head, q_len=1, causal, bf16), each strategy timed for
# 0.1 s (noise target 0: every point runs to --max_time), so a run takes a few seconds.
GRID = ["--backend=cpu", "--quiet", "--no_table", "--batch=1,3", "--heads=2", "--kv_heads=1", "--seq_len=9,37",
        "--pages=1,2", "--q_len=1", "--head_dim=8", "--causal=true", "--dtype=bf16", "--strategies=fused,head_batched",
        "--warmup=0", "--batch=1", "--seq_len=9,21,37,50,64"]
SLOW = ["--max_noise=0", "--min_samples=1000000", "--max_samples=1000000", "--max_time=0.1"]
TGRID = ["--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=9,21,37,50,64,80", "--head_dim=8",
         "--strategies=fused,head_batched", "--warmup=0"]
TSLOW = ["--max_noise=0", "--min_samples=1000000", "--max_time=0.1"]


def rows(path, ordered=False):
    """One line per row of a report (problem JSON, strategy, status), sorted unless ordered: the rows' identity
    (tests/cpu/rows_of.py)."""
    with open(path) as f:
        lines = [json.dumps(r["problem"], sort_keys=True) + " " + r["strategy"] + " " + r["status"]
                 for r in json.load(f)["results"]]
    return lines if ordered else sorted(lines)


def entries(path):
    """The finished problems a journal holds: its lines less the header (0 when there is no journal)."""
    if not os.path.isfile(path):
        return 0
    with open(path, "rb") as f:
        data = f.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0) - 1


def wait_for_entries(path, n):
    """Waits (up to 30 s) until journal `path` holds at least n finished problems."""
    for _ in range(300):
        if entries(path) >= n:
            return True
        time.sleep(0.1)
    return False


def exit_status(proc):
    """The status as the shell's `wait` gives it (128 + the signal for a process a signal ended)."""
    rc = proc.wait(timeout=300)
    return 128 - rc if rc < 0 else rc


def load(path):
    with open(path) as f:
        return json.load(f)


def start(folder, args, stderr=None):
    err = open(folder / stderr, "w") if stderr else subprocess.DEVNULL
    proc = subprocess.Popen(args, cwd=folder, stdout=subprocess.DEVNULL, stderr=err)
    if stderr:
        err.close()
    return proc


@pytest.fixture(scope="module")
def folder(module_work):
    return module_work


@pytest.fixture(scope="module")
def whole(attnbench, folder):
    r = run(attnbench, *GRID, "--min_samples=1", "--max_samples=1", "--json=whole.json", cwd=folder)
    assert r.returncode == 0, f"uninterrupted run: {r.stderr[-2000:]}"
    return rows(folder / "whole.json", ordered=True)


def test_uninterrupted_run_has_every_row(whole):
    assert len(whole) == 20, f"whole run has {len(whole)} rows, wanted 20"


@pytest.fixture(scope="module", params=["TERM", "INT", "TERM devices", "INT devices"])
def interrupted(request, attnbench, folder, whole):
    """Interrupts a run with SIGTERM or SIGINT once two problems finished, then resumes it: what each step left.
    With "devices" both runs spread the grid over two worker processes (--devices=0,1): the parent journals
    each problem as it finishes, drops the ones in flight at the signal, and resumes like one process."""
    sig = request.param.split()[0]
    pool = ["--devices=0,1"] if "devices" in request.param else []
    for f in ("r.json", "r.json.journal"):
        if os.path.exists(folder / f):
            os.remove(folder / f)
    proc = start(folder, [attnbench, *GRID, *SLOW, *pool, "--json=r.json"])
    grew = wait_for_entries(folder / "r.json.journal", 2)
    proc.send_signal(getattr(signal, "SIG" + sig))
    rc = exit_status(proc)
    assert grew, f"SIG{sig}: the journal did not grow"
    s = {"sig": sig, "rc": rc, "report": load(folder / "r.json"), "rows": rows(folder / "r.json"),
         "journal": entries(folder / "r.json.journal")}
    r = run(attnbench, *GRID, *SLOW, *pool, "--json=r.json", "--resume", cwd=folder)
    assert r.returncode == 0, f"SIG{sig}: --resume failed: {r.stderr}"
    s.update(resume_err=r.stderr, resumed_rows=rows(folder / "r.json", ordered=True), resumed=load(folder / "r.json"))
    return s


def test_signal_exit_status(interrupted):
    want = 143 if interrupted["sig"] == "TERM" else 130
    assert interrupted["rc"] == want, f"SIG{interrupted['sig']}: exit {interrupted['rc']}, wanted {want}"


def test_report_marked_interrupted(interrupted):
    d, sig = interrupted["report"], "SIG" + interrupted["sig"]
    assert d.get("interrupted") == sig and any("interrupted by" in w for w in d["warnings"]), \
        f"{sig}: the report is not marked interrupted"


def test_report_has_whole_problems_only(interrupted, whole):
    done = len(interrupted["rows"])
    assert 4 <= done < len(whole) and done % 2 == 0, f"SIG{interrupted['sig']}: {done} rows (whole problems only)"


def test_journal_and_report_agree(interrupted):
    assert interrupted["journal"] == len(interrupted["rows"]) // 2, \
        f"SIG{interrupted['sig']}: journal and report disagree"


def test_interrupted_rows_are_of_the_grid(interrupted, whole):
    extra = collections.Counter(interrupted["rows"]) - collections.Counter(whole)
    assert not extra, f"SIG{interrupted['sig']}: rows not of the grid: {list(extra)}"


def test_resume_note(interrupted):
    note = f"resuming from 'r.json.journal': {len(interrupted['rows']) // 2} problem(s) already done"
    assert note in interrupted["resume_err"], f"SIG{interrupted['sig']}: resume note: {interrupted['resume_err']}"


def test_resumed_rows_are_the_uninterrupted_runs(interrupted, whole):
    assert interrupted["resumed_rows"] == whole, \
        f"SIG{interrupted['sig']}: resumed rows differ from the uninterrupted run's"


def test_finished_report_not_marked_interrupted(interrupted):
    assert "interrupted" not in interrupted["resumed"], \
        f"SIG{interrupted['sig']}: the finished report is still marked interrupted"


def test_a_devices_journal_resumes_in_one_process(attnbench, folder, whole):
    # The journal records the settings as the workers apply them on their backend, not the device count: a run
    # interrupted on --devices resumes in one process (and ends with the uninterrupted run's rows).
    for f in ("d.json", "d.json.journal"):
        if os.path.exists(folder / f):
            os.remove(folder / f)
    proc = start(folder, [attnbench, *GRID, *SLOW, "--devices=0,1", "--json=d.json"])
    grew = wait_for_entries(folder / "d.json.journal", 2)
    proc.send_signal(signal.SIGTERM)
    assert exit_status(proc) == 143 and grew, "the --devices run was not interrupted with a journal"
    done = entries(folder / "d.json.journal")
    r = run(attnbench, *GRID, *SLOW, "--json=d.json", "--resume", cwd=folder)
    assert r.returncode == 0, f"one process could not resume the --devices journal: {r.stderr}"
    assert f"{done} problem(s) already done" in r.stderr, r.stderr
    assert rows(folder / "d.json", ordered=True) == whole


@pytest.fixture(scope="module")
def killed(attnbench, folder, whole):
    """SIGKILL: no report, but the journal holds what finished, and --resume completes the grid."""
    for f in ("k.json", "k.json.journal"):
        if os.path.exists(folder / f):
            os.remove(folder / f)
    proc = start(folder, [attnbench, *GRID, *SLOW, "--json=k.json"])
    grew = wait_for_entries(folder / "k.json.journal", 3)
    proc.kill()
    proc.wait(timeout=300)
    assert grew, "SIGKILL: the journal did not grow"
    s = {"report_left": os.path.exists(folder / "k.json"), "held": entries(folder / "k.json.journal")}
    with open(folder / "k.json.journal", "a") as f:
        f.write('{"problem": 9, "rows": [{"tor')  # a line cut short by the kill
    r = run(attnbench, *GRID, *SLOW, "--json=k.json", "--resume", cwd=folder)
    assert r.returncode == 0, f"SIGKILL: --resume failed: {r.stderr}"
    s.update(resume_err=r.stderr, resumed_rows=rows(folder / "k.json", ordered=True))
    # Resuming a finished run redoes nothing and rewrites the same rows.
    s["again"] = run(attnbench, *GRID, *SLOW, "--json=k.json", "--resume", cwd=folder)
    s["again_rows"] = rows(folder / "k.json", ordered=True)
    return s


def test_sigkill_leaves_the_journal(killed):
    assert not killed["report_left"] and killed["held"] >= 3, \
        f"SIGKILL: report left {killed['report_left']}, journal {killed['held']} entries"


def test_sigkill_resume_drops_the_torn_line(killed):
    assert f"{killed['held']} problem(s) already done (a torn last line was dropped)" in killed["resume_err"], \
        f"SIGKILL: resume note: {killed['resume_err']}"


def test_sigkill_resumed_rows(killed, whole):
    assert killed["resumed_rows"] == whole, "SIGKILL: resumed rows differ"


def test_resuming_a_finished_run(killed, whole):
    again = killed["again"]
    assert again.returncode == 0 and "10 problem(s) already done" in again.stderr and killed["again_rows"] == whole, \
        f"resuming a finished run: {again.stderr}"


def test_shard_resume(attnbench, folder, whole):
    # A shard is interrupted and resumed like a whole run.
    r = run(attnbench, *GRID, "--shard=1/2", "--min_samples=1", "--max_samples=1", "--json=sh.json", cwd=folder)
    assert r.returncode == 0, f"shard 1/2: {r.stderr}"
    r = run(attnbench, *GRID, "--shard=1/2", "--min_samples=1", "--max_samples=1", "--json=sh.json", "--resume",
            cwd=folder)
    assert r.returncode == 0, f"shard resume: {r.stderr}"
    shard = rows(folder / "sh.json")
    assert rows(folder / "sh.json", ordered=True) == [x for x in whole if any(p in x for p in shard)], "shard resume"


# Journals that do not belong to the run: one line, exit 2.
@pytest.mark.parametrize("needle,args", [
    ("belongs to another run: its settings differs", ["--seed=9"]),
    ("belongs to another run: its shard differs (was 0/1, now 1/2)", ["--shard=1/2"]),
    ("belongs to another run: its grid differs", ["--seq_len=9"]),
])
def test_journal_of_another_run_refused(attnbench, folder, killed, needle, args):
    expect_exit(2, needle, attnbench, *GRID, *SLOW, *args, "--json=k.json", "--resume", cwd=folder)


def test_journal_of_another_version_refused(attnbench, folder, killed):
    lines = open(folder / "k.json.journal").read().splitlines()
    h = json.loads(lines[0])
    h["tool"]["version"] = "0.0.1"
    with open(folder / "old.json.journal", "w") as f:
        f.write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
    expect_exit(2, "belongs to another run: its tool differs", attnbench, *GRID, *SLOW, "--json=old.json", "--resume",
                cwd=folder)


def test_not_a_journal_refused(attnbench, folder):
    with open(folder / "bad.json.journal", "w") as f:
        f.write("{}\n")
    expect_exit(2, "not an attnbench journal", attnbench, *GRID, "--json=bad.json", "--resume", cwd=folder)


def test_resume_needs_json(attnbench, folder):
    expect_exit(2, "--resume: needs --json", attnbench, *GRID, "--resume", cwd=folder)


def tune_keys(path):
    d = load(path)
    return sorted(e["key"] for e in d.get("gemm", []) + d.get("fused", []))


@pytest.fixture(scope="module")
def tuned(attnbench, folder):
    """tune: SIGTERM keeps the cache of what finished; --resume finishes it with every entry of an uninterrupted
    tune."""
    r = run(attnbench, "tune", *TGRID, "--min_samples=1", "--cache=tune_whole.json", cwd=folder)
    assert r.returncode == 0, f"tune: {r.stderr}"
    proc = start(folder, [attnbench, "tune", *TGRID, *TSLOW, "--cache=t.json"], stderr="tune_err.txt")
    grew = wait_for_entries(folder / "t.json.journal", 2)
    proc.send_signal(signal.SIGTERM)
    rc = exit_status(proc)
    assert grew, "tune: the journal did not grow"
    return {"rc": rc, "err": open(folder / "tune_err.txt").read(), "cache": load(folder / "t.json")}


@pytest.fixture(scope="module")
def tune_resumed(attnbench, folder, tuned, tune_refused_for_run):
    r = run(attnbench, "tune", *TGRID, *TSLOW, "--cache=t.json", "--resume", cwd=folder)
    assert r.returncode == 0, f"tune --resume failed: {r.stderr}"
    return r


@pytest.fixture(scope="module")
def tune_refused_for_run(attnbench, folder, tuned):
    """A tune's journal given to a run (before the tune is resumed)."""
    shutil.copyfile(folder / "t.json.journal", folder / "x.json.journal")
    return run(attnbench, *GRID, "--json=x.json", "--resume", cwd=folder)


def test_tune_sigterm(tuned):
    assert tuned["rc"] == 143 and "interrupted by SIGTERM" in tuned["err"], \
        f"tune SIGTERM: exit {tuned['rc']}: {tuned['err']}"


def test_tune_cache_keeps_what_finished(tuned):
    assert len(tuned["cache"].get("fused", [])) >= 2, "tune: the cache lost what finished"


def test_tune_journal_refused_by_run(tune_refused_for_run):
    assert_one_line_error(tune_refused_for_run, 2, "its command differs (was tune, now run)")


def test_tune_resume_note(tune_resumed):
    assert "problem(s) already done" in tune_resumed.stderr, f"tune --resume did not resume: {tune_resumed.stderr}"


def test_tune_resumed_cache_keys(folder, tune_resumed):
    assert tune_keys(folder / "t.json") == tune_keys(folder / "tune_whole.json"), "tune: resumed cache keys differ"


def test_tune_on_devices_stops_on_sigterm(attnbench, folder):
    # tune --devices: the pool hands out nothing more at the signal, the cache keeps what the workers finished,
    # and the exit code says it was interrupted (it used to run the whole grid after SIGTERM).
    for f in ("td.json", "td.json.journal"):
        if os.path.exists(folder / f):
            os.remove(folder / f)
    proc = start(folder, [attnbench, "tune", *TGRID, *TSLOW, "--devices=0,1", "--cache=td.json"], stderr="td_err.txt")
    for _ in range(300):  # the parent merges each finished problem into the cache file
        if os.path.exists(folder / "td.json") and load(folder / "td.json").get("fused"):
            break
        time.sleep(0.1)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    rc = exit_status(proc)
    err = open(folder / "td_err.txt").read()
    assert rc == 143 and "interrupted by SIGTERM" in err, f"exit {rc}: {err}"
    assert time.monotonic() - t0 < 10, "the pool did not stop promptly"
    fused = load(folder / "td.json").get("fused", [])
    assert 1 <= len(fused) < 6, f"{len(fused)} fused entries: the cache should hold what finished, not the whole grid"
