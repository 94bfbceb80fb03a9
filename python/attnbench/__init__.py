"""attnbench's reports in Python: load one or many attnbench.report/1 files into a pandas DataFrame, and the
plotting (attnbench-plot), PyTorch peer (attnbench-peer) and tune-reproduction (attnbench-tune-repro) tools.

    import attnbench
    df = attnbench.load_reports(["base.json", "new.json"])       # or "results/*.json", or a directory
    df.pivot_table(index="seq_len", columns="strategy", values="median_ms")   # seq_len 64, 128, 256, 512

Reports are read here, with no binary: rows are flattened exactly as `attnbench report FILE --format=json` does
(attnbench.reports), so labels, keys, rates and %copy are the binary's own, never re-derived. The problem's axes
are columns of their own, numbers as numbers (a pivot over seq_len or batch sorts 64, 128, 256, 512). Only grids
and suites need the binary (ask_grid). pandas is needed by load_reports only; the tools need the standard
library (and matplotlib / torch for theirs).
"""
import glob
import os
import warnings

from .reports import NotAReport, ReportError, RowsError, read_flat
from .rows import ask_grid, find_binary, flat_document, flat_rows

__all__ = ["load_reports", "report_paths", "read_flat", "RowsError", "ReportError", "ask_grid", "find_binary",
           "flat_document", "flat_rows"]
__version__ = "0.1.0"

# Columns taken from the report's device and settings onto every row (a DataFrame of several reports can then be
# grouped by device or timer).
DEVICE_COLUMNS = ("name", "backend", "copy_bandwidth_gbps", "sm_count", "cc")
SETTINGS_COLUMNS = ("timer", "hot", "verify")
# The problem's axes (the binary's axis table, src/core/problem_axes.cpp) that are whole numbers.
INTEGER_AXES = ("batch", "heads", "kv_heads", "seq_len", "q_len", "head_dim", "pages", "page_size", "pages_requested")


def _sources(reports):
    """(path, named) for what `reports` names: a path, a directory (its *.json), a glob pattern, or a list of
    those. `named` is False for the files a directory or a glob found (those may hold other JSON)."""
    items = [reports] if isinstance(reports, (str, os.PathLike)) else list(reports)
    out = []
    for item in items:
        item = os.fspath(item)
        if os.path.isdir(item):
            out += [(p, False) for p in sorted(glob.glob(os.path.join(item, "*.json")))]
        elif any(c in item for c in "*?[") and not os.path.exists(item):
            matched = sorted(glob.glob(item))
            if not matched:
                raise RowsError(f"no file matches '{item}'")
            out += [(p, False) for p in matched]
        else:
            out.append((item, True))
    return out


def report_paths(reports):
    """The files that `reports` names: a path, a directory (its *.json), a glob pattern, or a list of those."""
    return [path for path, _ in _sources(reports)]


def load_reports(reports, binary=None):
    """One DataFrame with a row per result row of every report (attnbench rows and peer rows), in each report's
    table order. Columns: `report` (the file), `row` (index in its `results`), the flat row (label, key,
    cache_key, strategy, peer, status, reason, median_ms, noise, samples, tflops, gbps, copy_fraction, vs_best,
    launches_*, rel_l2_err, ...), every problem field (batch, heads, kv_heads, seq_len, q_len, head_dim, pages,
    page_size, kv_layout, dtype, causal, ...; whole numbers as integers), and `device_*` / `settings_*` columns
    from the report's header.

    A file of a directory or glob that holds other JSON (a cache, a suite) is skipped with a warning naming it;
    a file named on its own that is not a report, and any report that cannot be read, raise RowsError naming
    the file. `binary` is not used (reading needs none); it is kept for callers that pass one."""
    import pandas as pd
    records = []
    for path, named in _sources(reports):
        try:
            doc = read_flat(path)
        except NotAReport as e:
            if named:
                raise
            warnings.warn(f"attnbench.load_reports: skipped '{path}': not an attnbench report (schema {e.schema!r})",
                          stacklevel=2)
            continue
        device, settings = doc["device"], doc["settings"]
        for r in doc["rows"]:
            rec = {"report": path, "row": r["index"]}
            rec.update({k: v for k, v in r.items() if k not in ("problem", "index")})
            for k, v in r["problem"].items():
                rec.setdefault(k, tuple(v) if isinstance(v, list) else v)
            for k in DEVICE_COLUMNS:
                rec["device_" + k] = device.get(k)
            for k in SETTINGS_COLUMNS:
                rec["settings_" + k] = settings.get(k)
            records.append(rec)
    df = pd.DataFrame.from_records(records)
    for column in INTEGER_AXES:  # every problem has them all (the reader fills in defaults): int64 columns
        if column in df.columns:
            df[column] = df[column].astype("int64")
    if "causal" in df.columns:
        df["causal"] = df["causal"].astype(bool)
    return df
