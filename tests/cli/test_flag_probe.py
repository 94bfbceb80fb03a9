"""Every flag of run, tune and grid (read from their --help, so a new flag is probed too) with values a user or
a script might pass by mistake: no crash, no "internal error", and a refusal is one line with exit 2. The probe
found `tune --dry_run --json/--md/--csv` crashing (SIGSEGV) and a --config list longer than a file name ending
as an internal error (session 46)."""
import re

import pytest

from cli_helpers import run

SMALL = ["--backend=cpu", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused",
         "--max_time=0.01", "--min_samples=1", "--warmup=0"]
VALUES = ["", "-1", "nan", "9223372036854775808", "1:0", ",", "a" * 300, "/"]
# Flags whose value the probe cannot vary alone: the command needs them (tune's --cache comes with every probe)
# or they take a process's worth of work (--devices spawns workers, --plugin and --peers load libraries).
SKIP = {"--help", "--devices", "--plugin", "--peers", "--backend"}


def flags_of(attnbench, cmd):
    """The --flags with a value (`--name=VALUE` in the command's --help)."""
    text = run(attnbench, cmd, "--help").stdout
    return sorted(set(re.findall(r"^\s+(?:-\w, )?(--[a-z_]+)=VALUE", text, re.M)) - SKIP)


def base_args(cmd):
    if cmd == "run":
        return ["run", *SMALL, "--dry-run"]
    if cmd == "tune":
        return ["tune", *SMALL, "--dry_run", "--cache=c.json"]
    return ["grid"]


@pytest.mark.parametrize("cmd", ["run", "tune", "grid"])
def test_every_flag_with_odd_values(attnbench, tmp_path, cmd):
    flags = flags_of(attnbench, cmd)
    assert len(flags) >= (4 if cmd == "grid" else 15), flags
    findings = []
    for flag in flags:
        for value in VALUES:
            args = base_args(cmd) + [f"{flag}={value}"]
            r = run(attnbench, *args, cwd=tmp_path, timeout=60)
            lines = [line for line in r.stderr.split("\n") if line]
            if r.returncode < 0 or r.returncode > 2 or "internal error" in r.stderr or (
                    r.returncode == 2 and len(lines) != 1):
                findings.append(f"{flag}={value[:20]!r}: exit {r.returncode}: {r.stderr[:300]!r}")
    assert not findings, "\n".join(findings)
