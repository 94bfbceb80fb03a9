#!/usr/bin/env python3
"""The tables of a scripts/scale-out-bench.sh output folder, as markdown on stdout: wall times and speedups
per step and device count (times.tsv), the problems each device ran (the reports' `device`), the exhaustive
tune's phases, screen stages and winners, its winners against the same tune without successive halving, the
GEMM-0 comparison, the resumed run's rows and verdicts, and the fleet's
winners against one process. Reads only what the binary wrote; measures nothing.
  scripts/scale_out_summary.py OUTDIR"""
import collections
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def times(out):
    rows = []
    try:
        with open(os.path.join(out, "times.tsv")) as f:
            for line in f:
                step, n, wall, rc = line.rstrip("\n").split("\t")
                rows.append((step, int(n), float(wall), int(rc)))
    except OSError:
        pass
    return rows


def label(problem):
    """A row's problem as a key: every field, so that problems differing only in kv_lens stay apart."""
    return json.dumps(problem, sort_keys=True)


def per_device(report):
    problems = collections.defaultdict(set)
    for r in report.get("results", []):
        problems[r.get("device", 0)].add(label(r["problem"]))
    return ", ".join(f"GPU {d}: {len(p)}" for d, p in sorted(problems.items()))


def statuses(report):
    c = collections.Counter(r.get("status", "?") for r in report.get("results", []))
    return " ".join(f"{k} {v}" for k, v in sorted(c.items()))


def scaling_table(out, rows, step, what):
    mine = [r for r in rows if r[0] == step]
    if not mine:
        return ""
    base = next((w for s, n, w, rc in mine if n == 1 and rc == 0), None)
    lines = [f"### {step}: {what}", "", "| GPUs | wall s | speedup | exit | rows | statuses | problems per GPU |",
             "|---|---|---|---|---|---|---|"]
    for s, n, wall, rc in mine:
        rep = load(os.path.join(out, f"{step}-{n}.json")) or {}
        speed = f"{base / wall:.2f}x" if base and wall > 0 and rc == 0 else "-"
        lines.append(f"| {n} | {wall:.1f} | {speed} | {rc} | {len(rep.get('results', []))} | {statuses(rep)} | "
                     f"{per_device(rep) if rep else '-'} |")
    return "\n".join(lines) + "\n"


def search_time_total(log):
    """The "GEMM search time" lines of a tune's log (one a device that tuned GEMMs) summed: seconds per phase
    over the devices and the candidates; "-" without any."""
    keys = ("listing", "verifying", "screening", "re-measuring")
    total, cands, cut, n = dict.fromkeys(keys, 0.0), 0, 0, 0
    for line in re.findall(r"GEMM search time: ([^\n]*)", log):
        for k in keys:
            m = re.search(k + r" ([0-9.]+)s", line)
            total[k] += float(m.group(1)) if m else 0.0
        m = re.search(r"\((\d+) candidates, (\d+) of them cut", line)
        if m:
            cands, cut = cands + int(m.group(1)), cut + int(m.group(2))
        n += 1
    if not n:
        return "-"
    return (", ".join(f"{k} {total[k]:.1f}s" for k in keys) +
            f" summed over the log's {n} device summaries; {cands} candidates, {cut} cut after their probe")


def tune_table(out, rows):
    mine = [r for r in rows if r[0] == "tune"]
    if not mine:
        return ""
    base = next((w for s, n, w, rc in mine if n == 1 and rc == 0), None)
    lines = ["### tune --search=exhaustive, the main job's problem", "",
             "| GPUs | wall s | speedup | exit | phases (from the log) |", "|---|---|---|---|---|"]
    winners = {}
    screens = []
    for s, n, wall, rc in mine:
        phase = "-"
        try:
            with open(os.path.join(out, f"tune-{n}.log")) as f:
                log = f.read()
            phase = search_time_total(log)
            screens += [f"| {n} | {shape} | {text} |" for shape, text in screen_stages(log)]
        except OSError:
            pass
        speed = f"{base / wall:.2f}x" if base and wall > 0 and rc == 0 else "-"
        lines.append(f"| {n} | {wall:.1f} | {speed} | {rc} | {phase} |")
        summary = load(os.path.join(out, f"tune-{n}.json"))
        if summary:
            winners[n] = summary
    if screens:
        lines += ["", "| GPUs | GEMM shape (strategy) | screen stages (from the log) |", "|---|---|---|"] + screens
    if winners:
        lines += ["", "| GPUs | kind | shape or problem | strategy | candidates | cut | verified+screened | "
                  "screen stages (candidates in) | re-measured | heuristic ms | best ms | gain | best |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for n, summary in winners.items():
            for r in summary.get("rows", summary if isinstance(summary, list) else []):
                lines.append(f"| {n} | {r.get('kind')} | {r.get('what')} | {r.get('strategy')} | {r.get('candidates')} | "
                             f"{r.get('cut')} | {r.get('ok')} | {stages(r)} | {r.get('finalists')} | "
                             f"{fmt(r.get('baseline_ms'))} | {fmt(r.get('best_ms'))} | {fmt(r.get('gain'), 3)} | "
                             f"{r.get('best')} |")
    return "\n".join(lines) + "\n"


def screen_stages(log):
    """(shape, stages) of each line under a tune summary's "screen stages" heading (one per finishing unit)."""
    found, inside = [], False
    for line in log.splitlines():
        if line.startswith("screen stages ("):
            inside = True
        elif inside and line.startswith("  ") and "): " in line:
            shape, _, text = line.strip().partition("): ")
            found.append((shape + ")", text))
        else:
            inside = False
    return found


def stages(row):
    """A summary row's screen stages as the candidates that entered each: 83993>7980>...>8 (- for none)."""
    entered = [str(s.get("entered")) for s in row.get("stages") or []]
    return ">".join(entered) or "-"


def baseline_section(out, rows):
    """The halving tune's winners (on one GPU) against the same tune without halving (the baseline step)."""
    base = load(os.path.join(out, "tune-baseline.cache.json"))
    if base is None:
        return ""
    wall = next((f"{w:.1f} s on {n} GPU(s), exit {rc}" for s, n, w, rc in rows if s == "baseline"), "-")
    halved = load(os.path.join(out, "tune-1.cache.json"))
    a, b = winners_of(halved), winners_of(base)
    lines = ["### the tune's winners against the screen without successive halving (issue 48: within 1%)", "",
             f"without halving: {wall}", "",
             "| entry | with halving (1 GPU) | ms | without | ms | with / without |", "|---|---|---|---|---|---|"]
    worst = None
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k, ("-", "-", None)), b.get(k, ("-", "-", None))
        ratio = x[2] / y[2] if isinstance(x[2], (int, float)) and isinstance(y[2], (int, float)) and y[2] > 0 else None
        if ratio is not None:
            worst = ratio if worst is None else max(worst, ratio)
        lines.append(f"| {k} | {x[1]} | {fmt(x[2])} | {y[1]} | {fmt(y[2])} | {fmt(ratio, 4)} |")
    lines += ["", f"slowest ratio: {fmt(worst, 4)}" + (" (within 1%)" if worst is not None and worst <= 1.01 else "")]
    return "\n".join(lines) + "\n"


def fmt(v, digits=4):
    return f"{v:.{digits}f}" if isinstance(v, (int, float)) else "-"


def verdicts(path):
    d = load(path)
    if not d:
        return "no comparison"
    c = collections.Counter(r.get("verdict", "?") for r in d.get("rows", []))
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def quiet_section(out):
    if not os.path.exists(os.path.join(out, "quiet-compare.json")):
        return ""
    return ("### GPU 0 alone against GPU 0 of an every-GPU run (the gate's settings)\n\n"
            f"verdicts of GPU 0's rows: {verdicts(os.path.join(out, 'quiet-compare.json'))}\n")


def resume_section(out):
    reports = [f for f in os.listdir(out) if f.startswith("resume-") and f.endswith(".json") and "compare" not in f]
    if not reports:
        return ""
    rep = load(os.path.join(out, reports[0])) or {}
    keys = collections.Counter((label(r["problem"]), r["strategy"]) for r in rep.get("results", []))
    whole = load(os.path.join(out, reports[0].replace("resume-", "quiet-"))) or {}
    want = {(label(r["problem"]), r["strategy"]) for r in whole.get("results", [])}
    twice = sum(1 for v in keys.values() if v > 1)
    first = ""
    try:
        with open(os.path.join(out, "resume-summary.txt")) as f:
            first = f.read().strip()
    except OSError:
        pass
    return ("### SIGTERM halfway, then --resume\n\n"
            f"{first}\n\nrows: {sum(keys.values())} ({len(keys)} distinct, {twice} more than once; the uninterrupted "
            f"run has {len(want)}, missing here: {len(want - set(keys))}); against the uninterrupted run: "
            f"{verdicts(os.path.join(out, 'resume-compare.json'))}\n")


def winners_of(cache):
    w = {}
    for g in (cache or {}).get("gemm", []):
        w["gemm " + g["key"]] = (g["algo"].get("blob") or g["algo"].get("label"), g["algo"].get("label"), g.get("best_ms"))
    for f in (cache or {}).get("fused", []):
        w["fused " + f["key"]] = (f["tile"]["name"], f["tile"]["name"], f.get("best_ms"))
    return w


def fleet_section(out):
    fleet = os.path.join(out, "fleet")
    merged, one = load(os.path.join(fleet, "cache.json")), load(os.path.join(fleet, "one-process.cache.json"))
    if merged is None and one is None:
        return ""
    a, b = winners_of(merged), winners_of(one)
    same = sum(1 for k in a if k in b and a[k][0] == b[k][0])
    # Where the configurations differ, how the merged winner's time compares with the one process's: two tunes
    # on different GPUs pick different near-ties, as two tunes on one GPU do.
    ratios = {k: a[k][2] / b[k][2] for k in a if k in b and a[k][0] != b[k][0] and a[k][2] and b[k][2]}
    within = sum(1 for r in ratios.values() if r <= 1.01)
    worst = max(ratios.values()) if ratios else None
    lines = ["### Slurm array scripts, one task per GPU, merged; against one process", "",
             f"entries: merged {len(a)}, one process {len(b)}; same winner {same}; only in one: "
             f"{len(set(a) ^ set(b))}; of the {len(ratios)} that differ, {within} within 1% of the one process's time"
             + (f" (slowest {fmt(worst, 4)}x)" if worst else ""),
             "", "| entry | merged | ms | one process | ms | merged / one |", "|---|---|---|---|---|---|"]
    for k in sorted(set(a) | set(b)):
        if k in a and k in b and a[k][0] == b[k][0]:
            continue
        x, y = a.get(k, ("-", "-", None)), b.get(k, ("-", "-", None))
        r = ratios.get(k)
        lines.append(f"| {k} | {x[1]} | {fmt(x[2])} | {y[1]} | {fmt(y[2])} | {fmt(r, 4) if r else '-'} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: scripts/scale_out_summary.py OUTDIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    rows = times(out)
    parts = [scaling_table(out, rows, "run", "a model suite"), scaling_table(out, rows, "default", "the main job"),
             tune_table(out, rows), baseline_section(out, rows), quiet_section(out), resume_section(out),
             fleet_section(out)]
    print("\n".join(p for p in parts if p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
