"""Issue 50 through the real binary (CPU backend): the surfaces added after the first reliability pass. Journals
(deep, huge, planted links, read-only, edited, cut, duplicated, of another grid, two runs at once), --resume,
merge of shards of another grid or with impossible headers, an output that is an input, a failing standard
output, FIFOs and devices as inputs, length files and messages without bounds, temporary files of a killed
write, suites with repeated grids or unknown keys, and signals at a run's first and last moments. Each case
failed before the fix (docs/reliability.md's table).

The tests run in order in one scratch folder (the bash original's sections): later ones read files earlier ones
wrote (c.json, closed.json, the folder d)."""
import fcntl
import glob
import hashlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import time

import pytest

from cli_helpers import assert_one_line_error, expect_exit, run

FUSED = ["--backend=cpu", "-q", "--batch=1", "--heads=2", "--head_dim=32", "--strategies=fused", "--max_time=0.02"]
GRID = ["--backend=cpu", "-q", "--no_table", "--batch=1", "--heads=2", "--head_dim=16", "--strategies=fused,head_batched",
        "--min_samples=1", "--max_samples=1", "--warmup=0"]
SLOW = ["--max_noise=0", "--min_samples=1000000", "--max_samples=1000000", "--max_time=0.5"]


@pytest.fixture
def A(attnbench):
    return [attnbench, *FUSED[:4], "--seq_len=64", *FUSED[4:]]


@pytest.fixture
def K(attnbench):
    return [attnbench, *FUSED]  # --kv_lens gives S


@pytest.fixture
def G(attnbench):
    return [attnbench, *GRID]


def rows(path):
    return len(json.load(open(path))["results"])


def valid_report(path):
    try:
        return json.load(open(path)).get("schema") == "attnbench.report/1"
    except (OSError, ValueError):
        return False


def lines_of(data):
    """The lines of bytes as `grep -c ''` counts them (a last line without its newline counts)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def md5(path):
    return hashlib.md5(open(path, "rb").read()).hexdigest()


def shell_rc(returncode):
    """The exit status as a shell reports it: 128 + N for a process killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def run_to(stdout, *args):
    """Runs args with standard output to the file `stdout` opens for writing, or closed (a shell's `>&-`) when
    stdout is None; stderr is captured as text."""
    if stdout is None:
        return subprocess.run([str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              errors="replace", preexec_fn=lambda: os.close(1), timeout=300)
    with open(stdout, "w") as f:
        return subprocess.run([str(a) for a in args], stdout=f, stderr=subprocess.PIPE, text=True, errors="replace",
                              timeout=300)


def expect_exit_bytes(code, needle, *args):
    """expect_exit's rule, lines counted on the raw bytes of stderr; returns them."""
    r = subprocess.run([str(a) for a in args], capture_output=True, timeout=300)
    n = lines_of(r.stderr)
    assert r.returncode == code and n == 1 and needle.encode() in r.stderr, (
        f"rc={r.returncode} (wanted {code}); stderr has {n} lines (wanted 1 containing {needle!r}): {r.stderr[:2000]!r}")
    return r.stderr


def env_without_copy_rate():
    # Without ATTNBENCH_HOST_COPY_GBPS the CPU backend measures its copy bandwidth first (about half a second).
    return {k: v for k, v in os.environ.items() if k != "ATTNBENCH_HOST_COPY_GBPS"}


def signal_early(pid):
    """SIGTERM as soon as pid catches it (/proc's SigCgt), or at 0.3 s if it does not by then (the code before
    took the signal only after the backend was up: the default action killed it, leaving nothing)."""
    for _ in range(30):
        try:
            cgt = [l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("SigCgt:")]
        except OSError:
            cgt = []
        if cgt and (int(cgt[0], 16) >> 14) & 1:
            break
        time.sleep(0.01)
    os.kill(pid, signal.SIGTERM)


# 1. A deeply nested journal line is dropped with a note (its problem runs again); a deep header is refused.
def test_deep_journal_lines(G, in_module_work):
    r = run(*G, "--seq_len=9,21", "--json=deep.json", "--resume")  # --resume: its journal stays
    assert r.returncode == 0, f"deep: first run: {r.stderr}"
    shutil.copy("deep.json.journal", "deep.orig")
    n = 100000
    for variant, line in (("arrays", "[" * n + "]" * n), ("objects", '{"a":' * n + "1" + "}" * n),
                          ("inrows", '{"problem": 0, "rows": [' + "[" * n + "]" * n + "]}")):
        shutil.copy("deep.orig", "deep.json.journal")
        with open("deep.json.journal", "a") as f:
            f.write(line + "\n")
        r = run(*G, "--seq_len=9,21", "--json=deep.json", "--resume")
        assert r.returncode == 0 and "nested more than 64 levels deep" in r.stderr and rows("deep.json") == 4, (
            f"deep journal line ({variant}): exit {r.returncode}: {r.stderr[:300]}")
    orig = open("deep.orig").read().splitlines(keepends=True)
    open("deep.json.journal", "w").write("[" * n + "]" * n + "\n" + "".join(orig[1:]))
    expect_exit(2, "not an attnbench journal", *G, "--seq_len=9,21", "--json=deep.json", "--resume")


def test_huge_journal_under_memory_limits(attnbench, G, in_module_work):
    # An 88 MB journal under memory limits: a clean result or one line and exit 3, never a signal.
    if os.environ.get("ASAN_OPTIONS") or os.environ.get("UBSAN_OPTIONS"):
        pytest.skip("under a sanitizer the address-space limit says nothing of attnbench's handling")
    line = '{"problem": 1, "rows": [' + ",".join(["1.5"] * 200000) + "]}\n"
    with open("big.json.journal", "w") as f:
        f.write(open("deep.orig").readline())
        for _ in range(110):
            f.write(line)
    shutil.copy("big.json.journal", "big.orig")
    tried = 0
    for limit in (100000, 400000):  # KiB of address space: the first runs out (it aborted before), the second not
        def limited(kib=limit):  # as `ulimit -v`: soft and hard limit
            resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
        # A CUDA build maps its libraries' gigabyte before main(): there the limit says nothing of attnbench's
        # handling.
        if subprocess.run([attnbench, "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          preexec_fn=limited).returncode != 0:
            print(f"note: {limit} KiB is too little to start this binary")
            continue
        tried += 1
        shutil.copy("big.orig", "big.json.journal")
        r = subprocess.run([*G, "--seq_len=9,21", "--json=big.json", "--resume"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, preexec_fn=limited, timeout=300)
        assert r.returncode == 0 or (r.returncode == 3 and lines_of(r.stderr) == 1
                                     and b"out of host memory" in r.stderr), (
            f"an 88 MB journal under a {limit} KiB limit: exit {r.returncode}: {r.stderr[:300]!r}")
    if not tried:
        pytest.skip("neither address-space limit is enough to start this binary")


# 2. A planted link at the journal's path is refused, the file it points to untouched; so is a read-only journal.
def test_planted_link_and_read_only_journal(A, in_module_work):
    os.makedirs("d", exist_ok=True)
    open("victim", "w").write("precious\n")
    os.symlink(os.path.abspath("victim"), "d/r.json.journal")
    expect_exit(2, "symbolic link", *A, "--json=d/r.json")
    assert open("victim").read() == "precious\n" and not os.path.exists("d/r.json"), \
        f"planted link: victim {open('victim').read()[:100]}"
    expect_exit(2, "symbolic link", *A, "--json=d/r.json", "--resume")
    os.remove("d/r.json.journal")
    r = run(*A, "--json=d/ro.json", "--resume")  # --resume: its journal stays
    assert r.returncode == 0, f"read-only: first run: {r.stderr}"
    os.chmod("d/ro.json.journal", 0o444)
    before = md5("d/ro.json.journal")
    expect_exit(2, "read-only", *A, "--json=d/ro.json")
    assert md5("d/ro.json.journal") == before, "a read-only journal was rewritten"
    open("d/mine.json.journal", "w").write("mine, not a journal\n")
    expect_exit(2, "not an attnbench journal", *A, "--json=d/mine.json")
    assert "mine, not a journal" in open("d/mine.json.journal").read(), "a file that is not a journal was replaced"


# 3. An output that is an input (or another output) is refused before any work; the cache is untouched.
def test_output_that_is_an_input(attnbench, A, K, in_module_work):
    r = run(attnbench, "tune", "--backend=cpu", "-q", "--batch=1", "--heads=2", "--seq_len=64", "--head_dim=32",
            "--strategies=fused", "--max_time=0.02", "--cache=c.json")
    assert r.returncode == 0, f"tune for the cache: {r.stderr}"
    before = md5("c.json")
    expect_exit(2, "--json 'c.json' is also --cache", *A, "--cache=c.json", "--json=c.json")
    expect_exit(2, "is also --cache", *A, "--cache=c.json", "--md=./c.json")
    expect_exit(2, "both write 'o.json'", *A, "--json=o.json", "--csv=o.json")
    expect_exit(2, "two outputs cannot share one file", *A, "--json=o.json", "--csv=./o.json")
    expect_exit(2, "--cache 'c.json' is also --json", attnbench, "tune", "--backend=cpu", "-q", "--batch=1",
                "--heads=2", "--seq_len=64", "--head_dim=32", "--strategies=fused", "--cache=c.json", "--json=c.json")
    assert md5("c.json") == before, "the cache was replaced"
    open("suite.json", "w").write('{"grids": [{"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32}]}')
    expect_exit(2, "is also the suite file of --config", attnbench, "--backend=cpu", "-q", "--config=suite.json",
                "--json=suite.json")
    open("lens.txt", "w").write("5\n9\n")
    open("ragged.json", "w").write(
        '{"grids": [{"batch": 2, "heads": 2, "head_dim": 16, "q_len": 1, "kv_lens": "file:lens.txt"}]}')
    expect_exit(2, "is also a lengths file (--kv_lens)", attnbench, "--backend=cpu", "-q", "--config=ragged.json",
                "--md=lens.txt")
    expect_exit(2, "is also a lengths file (--kv_lens)", *K, "--batch=2", "--q_len=1", "--kv_lens=file:lens.txt",
                "--csv=./lens.txt")
    assert open("lens.txt").read() == "5\n9\n", "the lengths file was replaced"


# 4. A failing standard output is one line and a non-zero exit; the journal never receives the table.
def test_failing_standard_output(A, in_module_work):
    assert_one_line_error(run_to("/dev/full", *A, "--json=-"), 2, "cannot write to standard output")
    assert_one_line_error(run_to(None, *A, "--json=-"), 2, "standard output is closed")
    assert_one_line_error(run_to("/dev/full", *A), 2, "cannot write to standard output")
    assert_one_line_error(run_to(None, *A, "--json=closed.json"), 2, "standard output is closed")
    assert_one_line_error(run_to(None, *A, "--json=/dev/stdout"), 2, "cannot write")
    # A reader gone before anything is written (`| head -c 0`).
    p = subprocess.Popen([*A, "--json=-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=300)
    assert shell_rc(p.returncode) == 2 and lines_of(err) == 1 and b"Broken pipe" in err, \
        f"a reader gone: exit {p.returncode}: {err[:300]!r}"
    assert valid_report("closed.json"), "closed stdout: report damaged"
    if os.path.exists("closed.json.journal"):  # removed once the report is written (kept only under --resume)
        for line in open("closed.json.journal"):
            json.loads(line)  # closed stdout: the journal damaged if this raises


# 5. merge refuses shards of two grids of one size, and shard headers that cannot be.
def test_merge_of_impossible_shards(attnbench, G, in_module_work):
    for seq, shard, out in (("32,64,128,256", "0/2", "s0.json"), ("32,64,200,256", "1/2", "s1.json"),
                            ("32,64,128,256", "1/2", "s1ok.json")):
        r = run(*G, f"--seq_len={seq}", f"--shard={shard}", f"--json={out}")
        assert r.returncode == 0, f"shard {out}: {r.stderr}"
    r = run(attnbench, "merge", "-q", "--json=m.json", "s0.json", "s1ok.json")
    assert r.returncode == 0, f"merge of the right shards: {r.stderr}"
    expect_exit(2, "another grid of that size", attnbench, "merge", "--json=m2.json", "s0.json", "s1.json")
    d = json.load(open("s0.json"))
    d["shard"]["index"] = 5
    json.dump(d, open("s5.json", "w"))
    d = json.load(open("s0.json"))
    d["shard"]["problems"] = d["shard"]["problems"] + [99]
    json.dump(d, open("s99.json", "w"))
    d = json.load(open("s0.json"))
    n = len(d["shard"]["problems"])
    d["shard"]["problems"] = json.load(open("s1ok.json"))["shard"]["problems"][:n]
    json.dump(d, open("swrong.json", "w"))
    expect_exit(2, "shard 5 of 2", attnbench, "merge", "--json=m3.json", "s5.json", "s1ok.json")
    expect_exit(2, "increasing grid indices below its grid size 4", attnbench, "merge", "--json=m4.json", "s99.json",
                "s1ok.json")
    expect_exit(2, "both ran problem", attnbench, "merge", "--json=m5.json", "swrong.json", "s1ok.json")
    assert not any(os.path.exists(f) for f in ("m2.json", "m3.json", "m4.json", "m5.json")), \
        "a refused merge wrote its output"


# 6. --resume checks every line: edited, deleted, duplicated and unknown rows are dropped and run again, so the
# report holds exactly the grid's rows, none of them the edited values; an empty or torn journal starts afresh.
def test_resume_checks_every_line(G, in_module_work):
    r = run(*G, "--seq_len=9,21,37", "--json=j.json", "--resume")  # --resume: its journal stays
    assert r.returncode == 0, f"journal: first run: {r.stderr}"
    shutil.copy("j.json.journal", "j.orig")
    for edit in ("median", "delete", "duplicate", "strategy"):
        lines = open("j.orig").read().splitlines()
        e = json.loads(lines[2])
        erows = e["rows"]
        if edit == "median":
            erows[0]["time_ms"]["median"] = 123456.0
        elif edit == "delete":
            del erows[1]
        elif edit == "duplicate":
            erows.append(erows[0])
        else:
            erows[1]["strategy"] = "bogus"
        lines[2] = json.dumps(e)
        open("j.json.journal", "w").write("\n".join(lines) + "\n")
        r = run(*G, "--seq_len=9,21,37", "--json=j.json", "--resume")
        text = open("j.json").read() if os.path.exists("j.json") else ""
        journal = json.loads(text)["journal"] if r.returncode == 0 else {}
        assert (r.returncode == 0 and ("line 3 of 'j.json.journal' dropped" in r.stderr
                                       or "1 line(s) of 'j.json.journal' dropped" in r.stderr)
                and rows("j.json") == 6 and "123456" not in text and "bogus" not in text
                and journal["complete"] and journal["dropped_lines"] == 1), (
            f"edited journal ({edit}): exit {r.returncode}, {rows('j.json')} rows: {r.stderr[:300]}")
    open("j.json.journal", "w").close()
    r = run(*G, "--seq_len=9,21,37", "--json=j.json", "--resume")
    assert r.returncode == 0 and "no whole header line" in r.stderr and rows("j.json") == 6, \
        f"an empty journal blocks --resume: {r.stderr[:300]}"
    open("j.json.journal", "w").write('{"command": "ru')
    r = run(*G, "--seq_len=9,21,37", "--json=j.json", "--resume")
    assert r.returncode == 0 and "no whole header line" in r.stderr and rows("j.json") == 6, \
        f"a torn header blocks --resume: {r.stderr[:300]}"


# 7. Two runs writing one report at once: the second is refused at its start (here the journal's lock is held by
# another process, this test's, deterministically), and with a real first run, that one finishes whole.
def test_two_runs_at_once(G, in_module_work):
    r = run(*G, "--seq_len=9,21", "--json=held.json", "--resume")  # --resume: its journal stays
    assert r.returncode == 0, f"held: first run: {r.stderr}"
    with open("held.json.journal") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        expect_exit(2, "another attnbench process is writing it", *G, "--seq_len=9,21,37", "--json=held.json")
        expect_exit(2, "another attnbench process is writing it", *G, "--seq_len=9,21", "--json=held.json",
                    "--resume")
    first = subprocess.Popen([*G, "--seq_len=9,21,37,50", *SLOW, "--json=two.json"])
    for _ in range(300):
        if os.path.exists("two.json.journal") and os.path.getsize("two.json.journal") > 0:
            break
        time.sleep(0.05)
    expect_exit(2, "another attnbench process is writing it", *G, "--seq_len=9,21", "--json=two.json")
    assert first.wait(timeout=300) == 0 and rows("two.json") == 8, "the first of two runs did not finish whole"


# 9. A FIFO with no writer, a device or a directory as an input: one line, exit 2, at once (no hang; the 20 s
# timeout only keeps a regression from hanging the test).
def test_fifos_devices_and_directories_as_inputs(attnbench, A, K, in_module_work):
    os.makedirs("d", exist_ok=True)
    os.mkfifo("fifo")
    expect_exit(2, "a FIFO or pipe, not a regular file", *K, "--kv_lens=file:fifo", timeout=20)
    expect_exit(2, "a FIFO or pipe, not a regular file", attnbench, "--backend=cpu", "-q",
                f"--config={os.path.abspath('fifo')}", timeout=20)
    os.mkfifo("d/f.json.journal")
    expect_exit(2, "a FIFO or pipe", *A, "--json=d/f.json", "--resume", timeout=20)
    expect_exit(2, "not a regular file", *A, "--json=d/f.json", timeout=20)
    expect_exit(2, "a FIFO or pipe, not a regular file", attnbench, "report", "fifo", timeout=20)
    expect_exit(2, "is a directory", *K, "--kv_lens=file:d")
    expect_exit(2, "--plugin 'fifo': a FIFO or pipe, not a regular file", *A, "--plugin=fifo", timeout=20)
    expect_exit(2, "--plugin 'fifo': a FIFO or pipe, not a regular file", attnbench, "list", "--plugin=fifo",
                timeout=20)
    # A stream the user names explicitly is still read.
    with open("c.json") as f:  # a cache, not a report: read, then refused
        rc = subprocess.run([attnbench, "report", "/dev/stdin"], stdin=f, capture_output=True).returncode
    assert rc == 2, f"report /dev/stdin: exit {rc}"
    with open("closed.json") as f:
        rc = subprocess.run([attnbench, "report", "/dev/stdin"], stdin=f, stdout=subprocess.DEVNULL).returncode
    assert rc == 0, "a report on /dev/stdin is not read"


# 10. Length files and messages are bounded: a device, a 15 MB line, binary garbage, a file over 16 MiB, a value
# with a newline.
def test_length_files_and_messages_are_bounded(A, K, in_module_work):
    expect_exit(2, "a character device, not a regular file", *K, "--kv_lens=file:/dev/zero")
    expect_exit(2, "a character device", *K, "--kv_lens=file:/dev/urandom")
    open("long.txt", "w").write("7" * 15000000 + "x\n")
    err = expect_exit_bytes(2, "is not a whole number", *K, "--kv_lens=file:long.txt")
    assert len(err) < 1000, f"a 15 MB line gave a {len(err)}-byte error"
    garbage = os.urandom(3000).replace(b"\n", b"") + b"\n\x01\x02\xff\n"
    open("garbage.txt", "wb").write(garbage)
    err = expect_exit_bytes(2, "--kv_lens", *K, "--kv_lens=file:garbage.txt")
    assert len(err) < 1000 and not any(b <= 0x08 or 0x0b <= b <= 0x1f for b in err), f"garbage in the error line: {err!r}"
    open("huge.txt", "w").write("1\n" * 9000000)
    expect_exit(2, "larger than 16 MiB", *K, "--kv_lens=file:huge.txt")
    expect_exit(2, "--shard: '0/2\\n' is not", *A, "--shard=0/2\n")


# 11. A temporary file that a killed writer left is removed by the next write; a killed write leaves none.
def test_temporary_files_of_killed_writes(A, G, in_module_work):
    dead_proc = subprocess.Popen(["true"])
    dead_proc.wait()
    dead = dead_proc.pid
    host = socket.gethostname().replace(".", "-")
    open(f"t.json.tmp.{host}.{dead}.abcdef", "w").write("junk\n")
    open(f"t.json.tmp.{host}.{os.getpid()}.abcdef", "w").write("other\n")  # a live writer's (this test's): kept
    r = run(*A, "--json=t.json")
    assert r.returncode == 0, f"write beside a stale temporary file: {r.stderr}"
    assert not os.path.exists(f"t.json.tmp.{host}.{dead}.abcdef") and \
        os.path.exists(f"t.json.tmp.{host}.{os.getpid()}.abcdef"), f"stale temporary files: {glob.glob('t.json.tmp.*')}"
    for f in glob.glob("t.json.tmp.*"):
        os.remove(f)
    r = run(*G, "--seq_len=8:400:+8", "--json=k.json")
    assert r.returncode == 0, f"kill: first run: {r.stderr}"
    for trial in range(1, 9):
        p = subprocess.Popen([*G, "--seq_len=8:400:+8", "--json=k.json", "--resume"], stderr=subprocess.DEVNULL)
        time.sleep(float(f"0.0{trial * 9}"))  # as the original: 0.09, 0.018, 0.027, ... 0.072 s
        p.kill()
        p.wait()
    # What a kill left (nothing where the file system has O_TMPFILE) is gone after the next whole write.
    r = run(*G, "--seq_len=8:400:+8", "--json=k.json", "--resume")
    assert r.returncode == 0, f"kill: the write after the kills: {r.stderr}"
    left = glob.glob("k.json.tmp.*") + glob.glob("k.json.journal.tmp.*")
    assert not left and valid_report("k.json"), f"killed writes left {left}"


# 12. Suites: the same problem in two grids, an unknown top-level key; signals at the first moment.
def test_suites_with_repeated_grids_or_unknown_keys(attnbench, in_module_work):
    open("twice.json", "w").write('{"grids": [{"batch": 1, "seq_len": 64}, {"batch": 1, "seq_len": 64}]}')
    expect_exit(2, "grids 1 and 2 both hold", attnbench, "grid", f"--config={os.path.abspath('twice.json')}")
    open("typo.json", "w").write('{"grid": [{"batch": 1}], "grids": [{"batch": 1}]}')
    expect_exit(2, "unknown top-level key 'grid'", attnbench, "grid", f"--config={os.path.abspath('typo.json')}")


def test_sigterm_in_the_first_moments(G, in_module_work):
    p = subprocess.Popen([*G, "--seq_len=9,21,37,50", *SLOW, "--json=early.json"], env=env_without_copy_rate())
    signal_early(p.pid)
    rc = shell_rc(p.wait(timeout=300))
    assert rc == 143 and valid_report("early.json") and \
        json.load(open("early.json")).get("interrupted") == "SIGTERM", (
            f"SIGTERM in the first moments: exit {rc}, report {os.path.exists('early.json')}")


def test_sigterm_after_the_last_problem(G, in_module_work):
    # A signal once every problem is finished (here: all in the journal) interrupts nothing: a complete report,
    # exit 0.
    r = run(*G, "--seq_len=9,21", "--json=late.json", "--resume")  # --resume: its journal stays
    assert r.returncode == 0, f"late: first run: {r.stderr}"
    p = subprocess.Popen([*G, "--seq_len=9,21", "--json=late.json", "--resume"], stderr=subprocess.PIPE, text=True,
                         env=env_without_copy_rate())
    signal_early(p.pid)
    _, err = p.communicate(timeout=300)
    rc = shell_rc(p.returncode)
    assert rc == 0 and rows("late.json") == 4 and "came after the last problem finished" in err and \
        "interrupted" not in json.load(open("late.json")), f"SIGTERM after the last problem: exit {rc}: {err[:300]}"
