"""The binary's view of a report's rows, for the Python scripts: `attnbench report FILE --format=json`
(docs/report-format.md, "Flat rows") gives each row's label, match key and cache key as the binary defines
them, so no script rebuilds them from the problem JSON.

    from attnbench_rows import find_binary, flat_rows
    rows = flat_rows(find_binary(), "out.json")   # list indexed like the report's results
"""
import json
import os
import shutil
import subprocess


class RowsError(Exception):
    pass


def find_binary(explicit=None):
    """The attnbench binary: `explicit`, $ATTNBENCH, build/attnbench beside this script, or the PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (explicit, os.environ.get("ATTNBENCH"), os.path.join(here, "..", "build", "attnbench"),
                      shutil.which("attnbench")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RowsError("cannot find the attnbench binary (set ATTNBENCH or build it with scripts/build.sh)")


def flat_document(binary, path):
    """The binary's flat view of a report: {"schema": "attnbench.rows/1", tool, device, settings, rows}, the rows
    grouped by problem as the console table shows them."""
    p = subprocess.run([binary, "report", path, "--format=json"], capture_output=True, text=True)
    if p.returncode != 0:
        message = p.stderr.strip().removeprefix("attnbench: error: ")  # the binary's line names the file
        raise RowsError(message or f"attnbench report {path} failed (exit {p.returncode})")
    return json.loads(p.stdout)


def flat_rows(binary, path):
    """The report's rows as the binary flattens them, indexed like the report's `results` array."""
    rows = flat_document(binary, path)["rows"]
    out = [None] * len(rows)
    for r in rows:
        out[r["index"]] = r
    return out
