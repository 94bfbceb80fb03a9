"""Every bad input through the real binary: a one-line error naming the problem, a non-zero exit that is not
a crash, and no report file left behind."""
import glob
import json
import os

import pytest

from cli_helpers import run

SMALL = ["--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8"]


def nonblank_lines(text):
    """The lines with at least one character (what `grep -c .` counts)."""
    return [line for line in text.split("\n") if line]


def assert_refused(r, needle):
    """Exit in 1..127 (an error, not a crash) and stderr one (non-blank) line containing needle."""
    lines = nonblank_lines(r.stderr)
    assert 1 <= r.returncode < 128 and len(lines) == 1 and needle in r.stderr, (
        f"rc={r.returncode}, stderr has {len(lines)} lines (wanted 1 containing {needle!r}):\n{r.stderr[:2000]}")


CASES = [
    ("batch", ["--batch=0"]),
    ("heads", ["--heads=-3"]),
    ("seq_len", ["--seq_len=abc"]),
    ("head_dim", ["--head_dim=12x"]),
    ("seq_len", ["--seq_len="]),
    ("range", ["--seq_len=512:128"]),
    ("step", ["--seq_len=128:512:/2"]),
    ("batch", ["--batch=1,,2"]),
    ("more than seq_len", [*SMALL, "--pages=17"]),
    ("page_size", [*SMALL, "--page_size=32"]),
    ("unknown strategy", [*SMALL, "--strategies=nested,warp_speed"]),
    ("dtype", [*SMALL, "--dtype=fp8"]),
    ("layout", [*SMALL, "--kv_layout=ring"]),
    ("backend", [*SMALL, "--backend=tpu"]),
    ("cannot open", ["--config=does_not_exist.json"]),
    ("malformed JSON", ["--config=broken.json"]),
    ("refused before allocating", ["--batch=64", "--heads=64", "--seq_len=65536", "--head_dim=128"]),
    ("refused before allocating", [*SMALL, "--seq_len=65536", "--head_dim=64", "--max_memory=1MiB"]),
    ("max_memory", [*SMALL, "--max_memory=lots"]),
    ("timer", [*SMALL, "--timer=sundial"]),
    ("tile", [*SMALL, "--tile=big"]),
    ("no strategy can run", [*SMALL, "--head_dim=300", "--strategies=fused"]),
    ("not one of this backend's tiles", [*SMALL, "--strategies=fused", "--tile=m64n200000000w4s2"]),
    # A warp-specialized (Hopper) tile name parses and reaches the backend, which names it in its refusal;
    # a mangled suffix is no tile name.
    ("tile m128n128w12s2ws is not one of this backend's tiles",
     [*SMALL, "--strategies=fused", "--tile=m128n128w12s2ws"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=m128n128w12s2wx"]),
    # Its persistent variant ("wsp") likewise; "wspp" is no tile name.
    ("tile m128n128w12s2wsp is not one of this backend's tiles",
     [*SMALL, "--strategies=fused", "--tile=m128n128w12s2wsp"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=m128n128w12s2wspp"]),
    # The TMA decode tiles' names parse the same way (the CPU backend has no decode tiles); malformed ones do not.
    ("tile decode-ws-s4 is not one of this backend's tiles", [*SMALL, "--strategies=fused", "--tile=decode-ws-s4"]),
    ("tile decode-ws is not one of this backend's tiles", [*SMALL, "--strategies=fused", "--tile=decode-ws"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=decode-ws-s0"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=decode-ws4"]),
    # Its 128-key and whole-row-box variants too, in FusedTile::name's one spelling.
    ("tile decode-ws-n128-rows-s4 is not one of this backend's tiles",
     [*SMALL, "--strategies=fused", "--tile=decode-ws-n128-rows-s4"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=decode-ws-n64"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=decode-ws-rows-n128"]),
    ("is not a tile name", [*SMALL, "--strategies=fused", "--tile=decode-ws-n0128"]),
]


@pytest.mark.parametrize("needle,args", CASES, ids=[" ".join(a) for _, a in CASES])
def test_bad_input_is_one_line_and_no_report(attnbench, work, needle, args):
    with open("broken.json", "w") as f:
        f.write('{ "grids": [ {"batch": 1,\n')
    r = run(attnbench, "--backend=cpu", "--quiet", "--json=out.json", *args)
    assert_refused(r, needle)
    assert not os.path.exists("out.json"), "a refused run left out.json"
    assert not glob.glob("out.json.tmp.*"), "a refused run left a temporary report"


LONG = "a" * 300  # longer than a file name may be (NAME_MAX 255): the file system refuses to even look it up


@pytest.mark.parametrize("needle,args", [
    ("no suite of that name", [f"--config={LONG}"]),
    ("no suite of that name", [f"--config=nosuch,{LONG}"]),
    ("--plugin", [*SMALL, f"--plugin=/tmp/{LONG}.so"]),
], ids=["config", "config list", "plugin"])
def test_a_name_too_long_for_the_file_system_is_refused_not_a_crash(attnbench, work, needle, args):
    # Found on an H200 host: a 300-character --config list crashed as "internal error" (a throwing lookup).
    r = run(attnbench, "--backend=cpu", "--quiet", "--json=out.json", *args)
    assert r.returncode == 2, r.stderr
    assert_refused(r, needle)
    r = run(attnbench, "tune", "--backend=cpu", "--dry-run", *SMALL, f"--cache=/tmp/{LONG}.json")
    assert r.returncode == 2 and "internal error" not in r.stderr, r.stderr
    assert_refused(r, "--cache")


def test_a_suite_list_longer_than_a_file_name_runs_every_suite(attnbench, work):
    # The list itself is no file: its 20 names (each a suite file here) all run.
    with open("tiny_suite.json", "w") as f:
        json.dump({"grids": [{"batch": 1, "heads": 1, "seq_len": 16, "head_dim": 8}]}, f)
    names = ",".join(["./tiny_suite.json"] * 20)
    assert len(names) > 255
    r = run(attnbench, "--backend=cpu", "--quiet", f"--config={names}", "--strategies=fused", "--json=out.json")
    assert r.returncode == 0, r.stderr
    assert len(json.load(open("out.json"))["results"]) >= 1


def test_unwritable_json_path(attnbench, work):
    # An unwritable --json path: error before any work, nothing written.
    r = run(attnbench, "--backend=cpu", "--quiet", *SMALL, "--json=/nonexistent-dir/out.json")
    assert_refused(r, "cannot write")


def test_unknown_flag(attnbench, work):
    # An unknown flag: CLI11's error in one line.
    r = run(attnbench, "--bogus")
    assert r.returncode == 2 and len(nonblank_lines(r.stderr)) == 1, f"rc={r.returncode}:\n{r.stderr[:2000]}"


def test_unsupported_head_dim_for_one_strategy(attnbench, work):
    # An unsupported head_dim for one strategy: that strategy is unsupported with a reason, the others run.
    r = run(attnbench, "--backend=cpu", "--quiet", *SMALL, "--head_dim=300", "--strategies=fused,head_batched",
            "--verify", "--json=out.json")
    assert r.returncode == 0, r.stderr
    by = {x["strategy"]: x for x in json.load(open("out.json"))["results"]}
    assert by["fused"]["status"] == "unsupported" and "head_dim" in by["fused"]["reason"], by["fused"]
    assert by["head_batched"]["status"] == "ok", by["head_batched"]
