"""The binary's view of a report's rows, for the Python scripts: `attnbench report FILE --format=json`
(docs/report-format.md, "Flat rows") gives each row's label, match key and cache key as the binary defines
them, so no script rebuilds them from the problem JSON.

    from attnbench.rows import find_binary, flat_rows
    rows = flat_rows(find_binary(), "out.json")   # list indexed like the report's results
    grid = ask_grid(find_binary(), ["--config=ci"])  # the problems a grid or suite expands to
"""
import json
import os
import shutil
import subprocess


class RowsError(Exception):
    pass


def find_binary(explicit=None):
    """The attnbench binary: `explicit`, $ATTNBENCH, the source tree's build/attnbench (this package run from a
    clone), the install's bin/attnbench (this package under PREFIX/share/attnbench/python), or the PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (explicit, os.environ.get("ATTNBENCH"), os.path.join(here, "..", "..", "build", "attnbench"),
                      os.path.join(here, "..", "..", "..", "..", "bin", "attnbench"), shutil.which("attnbench")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    raise RowsError("cannot find the attnbench binary (set ATTNBENCH, put it on the PATH, or build it with "
                    "scripts/build.sh)")


def _run(binary, args, what):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    if p.returncode != 0:
        message = p.stderr.strip().splitlines()[-1].removeprefix("attnbench: error: ") if p.stderr.strip() else ""
        raise RowsError(message or f"attnbench {what} failed (exit {p.returncode})")
    return json.loads(p.stdout)


def ask_grid(binary, args):
    """The problems `attnbench grid ARGS --format=json` expands to (the binary owns the axis grammar and suites)."""
    return _run(binary, ["grid", *args, "--format=json"], "grid")


def flat_document(binary, path):
    """The binary's flat view of a report: {"schema": "attnbench.rows/1", tool, device, settings, rows}, the rows
    grouped by problem as the console table shows them."""
    return _run(binary, ["report", path, "--format=json"], f"report {path}")


def flat_rows(binary, path):
    """The report's rows as the binary flattens them, indexed like the report's `results` array."""
    rows = flat_document(binary, path)["rows"]
    out = [None] * len(rows)
    for r in rows:
        out[r["index"]] = r
    return out
