#!/usr/bin/env python3
"""Does a run with a tuned cache reproduce the tuner's times?

    attnbench-tune-repro CACHE.json REPORT.json [REPORT.json ...] [--md]   (or scripts/tune_repro.py)

For every (problem, strategy) that the cache tuned, the tuned forward time is the fastest `best_ms` among
that strategy's entries for that problem (each GEMM shape is tuned with the shapes before it already at
their best, so the last one tuned is the whole forward at its best; the minimum picks it without relying on
order). The fused kernel's is its entry's `best_ms`. Each is set beside the REPORT rows for the same problem
and strategy (runs with `--cache=CACHE`, ideally with the tuner's timer).

With one REPORT, a row is reproduced when the difference is within 2 * sqrt(noise_tuned^2 + noise_rerun^2),
the within-run noise of both (the rule of `attnbench compare`). The tuned time comes from another process,
though, and a forward's median moves between processes by more than its within-run noise (nested's by
2-7% on the H200). Give several REPORTs, each from its own process, and the rerun time is the median of
their medians, noise_rerun the median of their noises, and the spread of their medians (the sample
standard deviation over their mean) joins the bound: 2 * sqrt(noise_tuned^2 + noise_rerun^2 + spread^2).
Exit status: 0 when every row reproduced, 1 otherwise, 2 on bad input.
"""
import json
import math
import statistics
import sys

from .reports import ReportError, flat_rows


def load(path, schema):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"tune_repro: {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if doc.get("schema") != schema:
        print(f"tune_repro: {path}: schema is {doc.get('schema')!r}, not {schema}", file=sys.stderr)
        sys.exit(2)
    return doc


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    md = "--md" in argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cache = load(args[0], "attnbench.cache/1")
    reports = [load(a, "attnbench.report/1") for a in args[1:]]

    tuned = {}  # (problem key, strategy) -> (ms, noise, entries)
    for e in cache.get("gemm", []):
        mw = e.get("measured_with", {})
        k = (mw.get("problem"), mw.get("strategy"))
        ms, noise = e["best_ms"], mw.get("best_noise", 0.0)
        old = tuned.get(k)
        if old is None or ms < old[0]:
            tuned[k] = (ms, noise, (old[2] if old else 0) + 1)
        else:
            tuned[k] = (old[0], old[1], old[2] + 1)
    for e in cache.get("fused", []):
        tuned[(e["key"], "fused")] = (e["best_ms"], e.get("best_noise", 0.0), 1)

    reruns = {}  # (problem key, strategy) -> [(median, noise, timer)], one per report
    try:  # the binary's cache key of every row, read with no binary (attnbench.reports)
        cache_keys = [[f["cache_key"] for f in flat_rows(a)] for a in args[1:]]
    except ReportError as e:
        print(f"tune_repro: {e}", file=sys.stderr)
        sys.exit(2)
    for report, keys in zip(reports, cache_keys):
        for r, cache_key in zip(report.get("results", []), keys):
            if r.get("status") != "ok" or r.get("strategy", "").startswith("peer:"):
                continue
            k = (cache_key, r["strategy"])
            if k in tuned:
                reruns.setdefault(k, []).append(
                    (r["time_ms"]["median"], r["time_ms"].get("noise", 0.0), r.get("timer", "?")))

    rows, bad = [], 0
    for k, runs in reruns.items():
        t_ms, t_noise, n = tuned[k]
        medians = [x[0] for x in runs]
        r_ms = statistics.median(medians)
        r_noise = statistics.median(x[1] for x in runs)
        spread = statistics.stdev(medians) / statistics.mean(medians) if len(runs) > 1 else 0.0
        diff = r_ms / t_ms - 1.0
        allowed = 2.0 * math.sqrt(t_noise ** 2 + r_noise ** 2 + spread ** 2)
        ok = abs(diff) <= allowed
        bad += not ok
        rows.append([k[0], k[1], f"{t_ms:.4f}", f"{r_ms:.4f}", str(len(runs)),
                     f"{spread * 100:.1f}%" if len(runs) > 1 else "-", f"{diff * 100:+.1f}%",
                     f"±{allowed * 100:.1f}%", runs[0][2], "reproduced" if ok else "NOT reproduced"])
    if not rows:
        print("tune_repro: no report row matches a tuned (problem, strategy) of the cache", file=sys.stderr)
        return 2
    head = ["problem", "strategy", "tuned ms", "rerun ms", "reruns", "spread", "diff", "noise bound", "rerun timer",
            "verdict"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
    print(f"{len(rows) - bad} of {len(rows)} reproduced within noise")
    return 0 if bad == 0 else 1


def cli():
    """The `attnbench-tune-repro` console command (and scripts/tune_repro.py)."""
    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    cli()
