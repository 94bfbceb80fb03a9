"""Report rows and grids for the Python scripts.

Reading a report needs no binary: attnbench.reports flattens its rows exactly as `attnbench report FILE
--format=json` does (docs/report-format.md, "Flat rows"), with the binary's label, match key and cache key.
Expanding a grid or a suite asks the binary (`attnbench grid ... --format=json`), which owns the axis grammar,
the suites and the FLOPs and bytes of every problem.

    from attnbench.rows import ask_grid, find_binary, flat_rows
    rows = flat_rows("out.json")                     # list indexed like the report's results
    grid = ask_grid(find_binary(), ["--config=ci"])  # the problems, each with label, key, flops and bytes
"""
import json
import os
import shutil
import subprocess

from . import reports
from .reports import RowsError  # noqa: F401  (re-exported: the package's error)


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
    try:
        p = subprocess.run([binary, *args], capture_output=True, text=True)
    except OSError as e:
        raise RowsError(f"cannot run '{binary}': {e.strerror}") from None
    if p.returncode != 0:
        message = p.stderr.strip().splitlines()[-1].removeprefix("attnbench: error: ") if p.stderr.strip() else ""
        raise RowsError(message or f"attnbench {what} failed (exit {p.returncode})")
    return json.loads(p.stdout)


def ask_grid(binary, args):
    """The problems `attnbench grid ARGS --format=json` expands to (the binary owns the axis grammar and suites):
    each problem's fields plus its `label`, `key`, `flops` and `bytes` (what a row's TFLOP/s and GB/s divide)."""
    return _run(binary, ["grid", *args, "--json=-"], "grid")


def _path_of(binary_or_path, path):
    return binary_or_path if path is None else path


def flat_document(binary_or_path, path=None):
    """The flat view of a report: {"schema": "attnbench.rows/1", tool, device, devices, settings, rows}, the rows
    grouped by problem as the console table shows them. `flat_document(path)`; the older
    `flat_document(binary, path)` still works (the binary is not used)."""
    return reports.read_flat(_path_of(binary_or_path, path))


def flat_rows(binary_or_path, path=None):
    """The report's flat rows, indexed like the report's `results` array: `flat_rows(path)` (or the older
    `flat_rows(binary, path)`; the binary is not used)."""
    return reports.flat_rows(_path_of(binary_or_path, path))
