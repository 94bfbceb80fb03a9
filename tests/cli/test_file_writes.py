"""Every file the tool writes goes through one writer (issue 16, findings 3, 4 and 9): targets that are not
regular files (a pipe, /dev/stdout) are written in place and never replaced, a link to a regular file
stays a link, a read-only target is refused with one line and exit 2 and left as it was, an existing
file keeps its mode, no temporary file is left, and the fresh-process fallback uses a private directory
under TMPDIR that it removes.

The tests run in order in one scratch folder (later ones read what earlier ones wrote), under umask 022."""
import glob
import os
import shutil
import stat
import subprocess

import pytest

from cli_helpers import expect_exit, run

SMALL = ["--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused",
         "--warmup=0", "--max_samples=1"]
TUNE = ["tune", "--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8",
        "--strategies=fused"]


@pytest.fixture(scope="module", autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path):
    return oct(stat.S_IMODE(os.stat(path).st_mode))[2:]


def read(path):
    with open(path) as f:
        return f.read()


def test_dev_stdout_is_written_through(attnbench, in_module_work):
    r = run(attnbench, *SMALL, "--json=good.json")
    assert r.returncode == 0, f"no report: {r.stderr[-1000:]}"
    # /dev/stdout: written through, still a link (the atomic rename used to replace it as root).
    with open("stdout_report.txt", "w") as out, open("stderr.txt", "w") as err:
        rc = subprocess.run([attnbench, *SMALL, "--no_table", "--json=/dev/stdout"], stdout=out, stderr=err).returncode
    assert rc == 0 and os.path.islink("/dev/stdout") and \
        '"schema": "attnbench.report/1"' in read("stdout_report.txt"), \
        f"--json=/dev/stdout (rc={rc}): {read('stderr.txt')}"


def test_named_pipe_is_written_through(attnbench, in_module_work):
    # A named pipe: read on the other end, still a pipe afterwards.
    os.mkfifo("pipe")
    with open("from_pipe.txt", "w") as out:
        reader = subprocess.Popen(["cat", "pipe"], stdout=out)
    r = run(attnbench, *SMALL, "--json=pipe")
    try:
        reader.wait(timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
    assert r.returncode == 0 and stat.S_ISFIFO(os.stat("pipe").st_mode) and \
        '"schema": "attnbench.report/1"' in read("from_pipe.txt"), f"--json=pipe (rc={r.returncode}): {r.stderr}"


def test_report_output_to_dev_null(attnbench, in_module_work):
    r = run(attnbench, "report", "good.json", "--md=/dev/null")
    assert r.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode), f"report --output=/dev/null: {r.stderr}"


def test_link_to_a_regular_file_stays_a_link(attnbench, in_module_work):
    # A link to a regular file: the file is replaced, the link stays.
    with open("real.json", "w") as f:
        f.write("old\n")
    os.symlink("real.json", "link.json")
    run(attnbench, *SMALL, "--json=link.json")
    assert os.path.islink("link.json") and "attnbench.report" in read("real.json"), \
        "link.json was replaced or real.json not written"


def test_dangling_link_refused(attnbench, in_module_work):
    # A link to nowhere is refused (writing would replace the link).
    os.symlink("missing/nowhere.json", "dangling.json")
    expect_exit(2, "cannot write 'dangling.json': a symbolic link to a missing file", attnbench, *SMALL,
                "--json=dangling.json")


def test_read_only_report_refused(attnbench, in_module_work):
    # Read-only targets: refused before any work, left as they were.
    for t in ("ro.json", "ro_cache.json", "ro.md"):
        with open(t, "w") as f:
            f.write("keep\n")
        os.chmod(t, 0o444)
    expect_exit(2, "cannot write 'ro.json': the file is read-only", attnbench, *SMALL, "--json=ro.json")


def test_read_only_cache_refused(attnbench, in_module_work):
    r = run(attnbench, *TUNE, "--cache=cache.json")
    assert r.returncode == 0, f"no cache: {r.stderr[-1000:]}"
    try:  # as `cp cache.json ro_cache.json 2>/dev/null`: only root can write over the read-only file
        shutil.copyfile("cache.json", "ro_cache.json")
    except OSError:
        pass
    os.chmod("ro_cache.json", 0o444)
    shutil.copyfile("ro_cache.json", "ro_cache.before")
    expect_exit(2, "cannot write 'ro_cache.json': the file is read-only", attnbench, *TUNE, "--cache=ro_cache.json")


def test_read_only_report_output_refused(attnbench, in_module_work):
    expect_exit(2, "cannot write 'ro.md': the file is read-only", attnbench, "report", "good.json", "--md=ro.md")


def test_read_only_compare_output_refused(attnbench, in_module_work):
    expect_exit(2, "cannot write 'ro.md': the file is read-only", attnbench, "compare", "good.json", "good.json",
                "--output=ro.md")


def test_read_only_targets_unchanged(in_module_work):
    with open("ro_cache.json", "rb") as a, open("ro_cache.before", "rb") as b:
        cache_same = a.read() == b.read()
    assert read("ro.json").rstrip("\n") == "keep" and read("ro.md").rstrip("\n") == "keep" and \
        mode("ro.json") == "444" and mode("ro_cache.json") == "444" and cache_same, "a read-only target changed"


def test_existing_file_keeps_its_mode(attnbench, in_module_work):
    # An existing file keeps its mode; a new one gets 0666 & ~umask.
    with open("mode.json", "w") as f:
        f.write("old\n")
    os.chmod("mode.json", 0o640)
    run(attnbench, *SMALL, "--json=mode.json")
    assert mode("mode.json") == "640" and mode("good.json") == "644" and "attnbench.report" in read("mode.json"), \
        f"modes: mode.json {mode('mode.json')}, good.json {mode('good.json')}"


def test_report_output_new_file_mode(attnbench, in_module_work):
    r = run(attnbench, "report", "good.json", "--csv=out.csv")
    assert r.returncode == 0 and mode("out.csv") == "644", f"report --output (rc={r.returncode}): {r.stderr}"


def test_no_temporary_files_left(in_module_work):
    left = glob.glob("./*.tmp.*")
    assert not left, f"temporary files left: {left}"


def test_fresh_process_fallback_removes_its_directory(attnbench, in_module_work):
    # The fresh-process fallback: a private directory under TMPDIR, removed afterwards; the rows arrive.
    os.mkdir("tmpdir")
    r = run(attnbench, "--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16,24", "--head_dim=8",
            "--warmup=0", "--max_samples=1", "--json=resumed.json",
            env={"TMPDIR": str(in_module_work / "tmpdir"), "ATTNBENCH_INJECT_FAULT": "head_batched"})
    left = os.listdir("tmpdir")
    assert r.returncode == 1 and not left and "fresh process" in read("resumed.json"), \
        f"fresh process (rc={r.returncode}, tmpdir: {left})"
