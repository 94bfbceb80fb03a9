"""Hostile JSON input files through the real binary (issue 16, findings 2 and 6): documents nested deeper
than 64 levels, text after the document, mistyped fields and directories given as files are refused by
every reader (report, compare, run --cache, tune --cache, --config) with one line and exit 2, never a
crash, library text or exit 3.

The input files are made once, in one scratch folder the tests share."""
import json
import os
import shutil

import pytest

from cli_helpers import expect_exit, run

TINY = ["--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=fused",
        "--warmup=0"]
SMALL = [*TINY, "--max_samples=1"]
# --config refuses size flags.
SUITE = ["--backend=cpu", "--quiet", "--strategies=fused", "--warmup=0", "--max_samples=1"]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def mutate(src, out, edit):
    """out is src after `edit` changed its document (edit returns the new document: an object, or JSON text)."""
    with open(src) as f:
        d = edit(json.load(f))
    write(out, d if isinstance(d, str) else json.dumps(d))


def deep(n):
    return "[" * n + "]" * n + "\n"


def set_in(d, path, value):
    """d with d[path[0]]...[path[-1]] = value (for mutate)."""
    x = d
    for k in path[:-1]:
        x = x[k]
    x[path[-1]] = value
    return d


@pytest.fixture(scope="module", autouse=True)
def inputs(attnbench, module_work):
    before = os.getcwd()
    os.chdir(module_work)  # the tests enter it again (in_module_work); here it is where the files are made
    try:
        make_inputs(attnbench)
    finally:
        os.chdir(before)


def make_inputs(attnbench):
    r = run(attnbench, *SMALL, "--json=good.json")
    assert r.returncode == 0, f"could not make a report: {r.stderr}"
    r = run(attnbench, "tune", *TINY, "--cache=cache.json")
    assert r.returncode == 0, f"could not make a cache: {r.stderr}"

    # Nesting: 70,000 deep in a row's problem, 100,000 in settings, 500,000 anywhere in a cache or a config.
    write("deep70k.txt", deep(70000))
    write("deep100k.txt", deep(100000))
    write("deep500k.txt", deep(500000))
    mutate("good.json", "deep_problem.json", lambda d: json.dumps(d).replace(
        '"problem": {', '"problem": ' + open("deep70k.txt").read().strip() + ', "p": {', 1))
    mutate("good.json", "deep_settings.json", lambda d: json.dumps(d).replace(
        '"settings": {', '"settings": ' + open("deep100k.txt").read().strip() + ', "s": {', 1))
    mutate("cache.json", "deep_cache.json",
           lambda d: json.dumps(d)[:-1] + ', "x": ' + open("deep500k.txt").read().strip() + "}")
    write("deep_config.json", '{"grids": [{"batch": 1, "comment": ' + open("deep500k.txt").read() + "}]}")
    # 64 levels are fine, 65 are not (the limit is exact).
    write("depth64.json", '{"grids": [{"batch": 1, "comment": ' + "[" * 61 + "]" * 61 + "}]}\n")
    write("depth65.json", '{"grids": [{"batch": 1, "comment": ' + "[" * 62 + "]" * 62 + "}]}\n")

    # Text after the document.
    write("trailing.json", open("good.json").read() + '{"schema": "attnbench.report/1", "results": []}\n')
    write("trailing_cache.json", open("cache.json").read() + "garbage\n")
    write("trailing_config.json", '{"grids": [{"batch": 1}]} ]')

    # A number no double holds (found by fuzz_suite: exit 3 with library text before).
    write("huge_number.json", '{"grids": [{"batch": 1e500}]}')
    mutate("good.json", "huge_median.json", lambda d: json.dumps(d).replace('"median": ', '"median": 1e500, "m": ', 1))
    mutate("cache.json", "huge_cache.json", lambda d: json.dumps(d)[:-1] + ', "x": -1e999}')

    # Mistyped fields.
    mutate("good.json", "row_number.json", lambda d: set_in(d, ["results", 0], 5))
    mutate("good.json", "causal_yes.json", lambda d: set_in(d, ["results", 0, "problem", "causal"], "yes"))
    mutate("good.json", "median_text.json", lambda d: set_in(d, ["results", 0, "time_ms", "median"], "fast"))
    mutate("good.json", "warnings_number.json", lambda d: set_in(d, ["warnings"], [1]))
    mutate("good.json", "results_object.json", lambda d: set_in(d, ["results"], {}))
    mutate("cache.json", "cache_top.json", lambda d: set_in(d, ["fused", 0, "tuned_at"], 7))

    # A directory given as a file.
    os.mkdir("adir")


@pytest.mark.parametrize("args", [
    ["report", "deep_problem.json"],
    ["compare", "good.json", "deep_settings.json"],
    ["compare", "deep_settings.json", "good.json"],
    [*SMALL, "--cache=deep_cache.json"],
], ids=["report", "compare-new", "compare-base", "run-cache"])
def test_deep_nesting_refused(attnbench, in_module_work, args):
    expect_exit(2, "nested more than 64 levels", attnbench, *args)


def test_deep_cache_refused_by_tune(attnbench, in_module_work):
    shutil.copyfile("deep_cache.json", "tune_target.json")
    expect_exit(2, "nested more than 64 levels", attnbench, "tune", *TINY, "--cache=tune_target.json")


def test_tune_leaves_a_refused_cache_unchanged(in_module_work):
    with open("deep_cache.json", "rb") as a, open("tune_target.json", "rb") as b:
        assert a.read() == b.read(), "tune changed a cache it refused"


def test_deep_config_refused(attnbench, in_module_work):
    expect_exit(2, "nested more than 64 levels", attnbench, *SUITE, "--config=deep_config.json")


def test_config_64_levels_deep_runs(attnbench, in_module_work):
    r = run(attnbench, *SUITE, "--config=depth64.json")
    assert r.returncode == 0, f"a config 64 levels deep was refused: {r.stderr}"


def test_config_65_levels_deep_refused(attnbench, in_module_work):
    expect_exit(2, "nested more than 64 levels", attnbench, *SUITE, "--config=depth65.json")


REFUSED = [
    # Text after the document.
    ("text after the document", ["report", "trailing.json"]),
    ("text after the document", [*SMALL, "--cache=trailing_cache.json"]),
    ("text after the document", [*SUITE, "--config=trailing_config.json"]),
    # A number no double holds.
    ("huge_number.json': malformed JSON (a number out of range)", [*SUITE, "--config=huge_number.json"]),
    ("malformed JSON (a number out of range)", ["report", "huge_median.json"]),
    ("malformed JSON (a number out of range)", [*SMALL, "--cache=huge_cache.json"]),
    # Mistyped fields: one line naming the file and the field, exit 2.
    ("row_number.json': results[0] must be an object", ["report", "row_number.json"]),
    ("causal_yes.json': results[0].problem.causal must be true or false", ["report", "causal_yes.json"]),
    ("causal_yes.json': results[0].problem.causal must be true or false", ["compare", "good.json", "causal_yes.json"]),
    ("results[0].time_ms.median must be a number or null", ["compare", "median_text.json", "good.json"]),
    ("warnings[0] must be a string", ["report", "warnings_number.json", "--md=-"]),
    ("results must be a list", ["report", "results_object.json", "--csv=-"]),
    ("field 'tuned_at' must be a string", [*SMALL, "--cache=cache_top.json"]),
    # A directory given as a file.
    ("adir': is a directory", ["report", "adir"]),
    ("adir': is a directory", ["compare", "adir", "good.json"]),
    ("adir': is a directory", [*SMALL, "--cache=adir"]),
    ("adir': is a directory", [*SUITE, "--config=adir"]),
    ("is a directory", ["tune", *TINY, "--cache=adir"]),
]


@pytest.mark.parametrize("needle,args", REFUSED,
                         ids=[(a[0] if not a[0].startswith("-") else "run") + " " + a[-1] for _, a in REFUSED])
def test_hostile_input_refused(attnbench, in_module_work, needle, args):
    expect_exit(2, needle, attnbench, *args)
