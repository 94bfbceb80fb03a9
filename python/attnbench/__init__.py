"""attnbench's reports in Python: load one or many attnbench.report/1 files into a pandas DataFrame, and the
plotting (attnbench-plot), PyTorch peer (attnbench-peer) and tune-reproduction (attnbench-tune-repro) tools.

    import attnbench
    df = attnbench.load_reports(["base.json", "new.json"])       # or "results/*.json", or a directory
    df.pivot_table(index="label", columns="strategy", values="median_ms")

Rows come from the binary (`attnbench report FILE --format=json`, found as $ATTNBENCH, the build tree's or the
install's binary, or on the PATH), so labels, keys, rates and %copy are the binary's own, never re-derived here.
pandas is needed by load_reports only; the tools need the standard library (and matplotlib / torch for theirs).
"""
from .rows import RowsError, ask_grid, find_binary, flat_document, flat_rows

__all__ = ["load_reports", "report_paths", "RowsError", "ask_grid", "find_binary", "flat_document", "flat_rows"]
__version__ = "0.1.0"

# Columns taken from the report's device and settings onto every row (a DataFrame of several reports can then be
# grouped by device or timer).
DEVICE_COLUMNS = ("name", "backend", "copy_bandwidth_gbps", "sm_count", "cc")
SETTINGS_COLUMNS = ("timer", "hot", "verify")


def report_paths(reports):
    """The files that `reports` names: a path, a directory (its *.json), a glob pattern, or a list of those."""
    import glob
    import os
    items = [reports] if isinstance(reports, (str, os.PathLike)) else list(reports)
    paths = []
    for item in items:
        item = os.fspath(item)
        if os.path.isdir(item):
            paths += sorted(glob.glob(os.path.join(item, "*.json")))
        elif any(c in item for c in "*?[") and not os.path.exists(item):
            matched = sorted(glob.glob(item))
            if not matched:
                raise RowsError(f"no file matches '{item}'")
            paths += matched
        else:
            paths.append(item)
    return paths


def load_reports(reports, binary=None):
    """One DataFrame with a row per result row of every report (attnbench rows and peer rows), in each report's
    table order. Columns: `report` (the file), `row` (index in its `results`), the binary's flat row (label, key,
    cache_key, strategy, peer, status, reason, median_ms, noise, samples, tflops, gbps, copy_fraction, vs_best,
    launches_*, rel_l2_err, ...), every problem field (batch, heads, kv_heads, seq_len, q_len, head_dim, pages,
    page_size, kv_layout, dtype, causal, ...), and `device_*` / `settings_*` columns from the report's header.
    Raises RowsError naming the file when one cannot be read."""
    import pandas as pd
    binary = find_binary(binary)
    records = []
    for path in report_paths(reports):
        doc = flat_document(binary, path)
        device, settings = doc.get("device") or {}, doc.get("settings") or {}
        for r in doc.get("rows", []):
            rec = {"report": path, "row": r.get("index")}
            rec.update({k: v for k, v in r.items() if k not in ("problem", "index")})
            for k, v in (r.get("problem") or {}).items():
                rec.setdefault(k, v if not isinstance(v, list) else tuple(v))
            for k in DEVICE_COLUMNS:
                rec["device_" + k] = device.get(k)
            for k in SETTINGS_COLUMNS:
                rec["settings_" + k] = settings.get(k)
            records.append(rec)
    return pd.DataFrame.from_records(records)
