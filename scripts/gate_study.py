#!/usr/bin/env python3
"""Tables of the CI perf gate's false-alarm rate and power from the reports scripts/gate-study.sh wrote.

Every verdict comes from the binary: each pair of reports is compared with `attnbench compare --json=-` at
its default threshold. A/A: every pair of the unchanged runs of a command (ci-aa-*, default-aa-*). Power: every
(unchanged run, slowed run) pair, base = the unchanged one; a row counts as caught when its verdict is `slower`.
Also: how far each row's median moved between the unchanged runs, with the gate's median of round medians and with
the first round alone (what one round, as before the gate used rounds, would have given), and wall times.

    scripts/gate_study.py OUTDIR [--attnbench build/attnbench]
"""
import argparse
import glob
import itertools
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attnbench_rows import flat_rows  # noqa: E402


def compare(binary, base, new, extra=()):
    p = subprocess.run([binary, "compare", base, new, "--json=-", *extra], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"gate_study: compare {base} {new} failed (exit {p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout[p.stdout.index("{"):]), p.returncode


def row_key(r):
    """(label, strategy) of a compare row or a labelled report row: the label is the binary's."""
    return r["label"], r["strategy"]


def labelled_results(binary, path):
    """A report's result rows, each with the binary's label (attnbench report --format=json)."""
    flat = flat_rows(binary, path)
    return [dict(r, label=f["label"]) for r, f in zip(json.load(open(path))["results"], flat)]


def spread_table(binary, files):
    """Per row: relative sd (%) across runs of the reported median and of the first round's median."""
    med, first = {}, {}
    for f in files:
        for r in labelled_results(binary, f):
            if r.get("status") != "ok":
                continue
            k = row_key(r)
            med.setdefault(k, []).append(r["time_ms"]["median"])
            rounds = r.get("rounds", {}).get("medians_ms") or [r["time_ms"]["median"]]
            first.setdefault(k, []).append(rounds[0])
    rows = []
    for k in med:
        if len(med[k]) < 2:
            continue
        sd = lambda xs: statistics.stdev(xs) / statistics.mean(xs) * 100
        rng = lambda xs: (max(xs) - min(xs)) / statistics.mean(xs) * 100
        rows.append((k, statistics.mean(med[k]), sd(med[k]), rng(med[k]), sd(first[k]), rng(first[k])))
    return rows


def walls(out):
    w = {}
    path = os.path.join(out, "walls.txt")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"(\S+) rc=(\d+) (\d+)ms", line)
            if m:
                w[m.group(1)] = (int(m.group(2)), int(m.group(3)) / 1000)
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--attnbench", default="build/attnbench")
    ap.add_argument("--threshold", help="passed to compare (default: compare's own)")
    a = ap.parse_args()
    extra = [f"--threshold={a.threshold}"] if a.threshold else []
    w = walls(a.outdir)
    print("# CI gate study\n")
    first = sorted(glob.glob(os.path.join(a.outdir, "*-aa-*.json")))
    if first:
        rep = json.load(open(first[0]))
        d = rep.get("device", {})
        print(f'Device: {d.get("name")} (driver {d.get("driver")}, CUDA {d.get("cuda_runtime")}); '
              f'attnbench {rep.get("tool", {}).get("git")}; settings: {json.dumps(rep.get("settings"))}\n')
    aa_table, power_table, spread_rows = [], [], []
    for group in ("ci", "default"):
        aa = sorted(glob.glob(os.path.join(a.outdir, f"{group}-aa-*.json")),
                    key=lambda f: int(re.search(r"-(\d+)\.json$", f).group(1)))
        if len(aa) < 2:
            continue
        counts = {"slower": 0, "faster": 0, "ambiguous": 0, "same": 0}
        rows = exits = pairs = 0
        worst = 0.0
        for x, y in itertools.combinations(aa, 2):
            c, rc = compare(a.attnbench, x, y, extra)
            pairs += 1
            exits += rc == 1
            for r in c["rows"]:
                rows += 1
                counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
                if r.get("change") is not None:
                    worst = max(worst, abs(r["change"]))
        aa_table.append((group, len(aa), pairs, rows, counts["slower"], counts["faster"], counts["ambiguous"],
                         counts["same"], exits, worst * 100))
        for f in sorted(glob.glob(os.path.join(a.outdir, f"{group}-slow-*.json")),
                        key=lambda f: float(re.search(r"-slow-([\d.]+)\.json$", f).group(1))):
            level = re.search(r"-slow-([\d.]+)\.json$", f).group(1)
            achieved_by_row = {row_key(r): r["injected_slowdown"]["achieved"] for r in labelled_results(a.attnbench, f)
                               if "injected_slowdown" in r}
            achieved = list(achieved_by_row.values())
            caught = total = ambiguous = near_total = near_caught = 0
            for x in aa:
                c, _ = compare(a.attnbench, x, f, extra)
                for r in c["rows"]:
                    total += 1
                    caught += r["verdict"] == "slower"
                    ambiguous += r["verdict"] == "ambiguous"
                    # Rows whose calibration hit the request within 30%: on a forward of a few tens of
                    # microseconds the delay kernel's own launch alone is more than 2%.
                    got = achieved_by_row.get(row_key(r))
                    if got is not None and abs(got - float(level) / 100) <= 0.3 * float(level) / 100:
                        near_total += 1
                        near_caught += r["verdict"] == "slower"
            power_table.append((group, level, len(aa), total, caught, ambiguous, near_caught, near_total,
                                statistics.median(achieved) * 100 if achieved else float("nan"),
                                min(achieved) * 100 if achieved else float("nan"),
                                max(achieved) * 100 if achieved else float("nan")))
        spread_rows += [(group,) + r for r in spread_table(a.attnbench, aa)]
    print("## A/A: unchanged code, every pair of runs compared\n")
    print("| command | runs | pairs | (pair, row) verdicts | slower | faster | ambiguous | same | compares exiting 1 | largest |change| |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for g in aa_table:
        print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f}% |".format(*g))
    print("\n## Power: every strategy slowed by the test hook, each slowed run compared with every unchanged run\n")
    print("| command | injected | base runs | (pair, row) verdicts | slower (caught) | detection rate | ambiguous | "
          "rows achieving the request ±30%: caught / verdicts | achieved slowdown median [min, max] |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    for g, level, n, total, caught, amb, nc, nt, med, lo, hi in power_table:
        rate = caught / total * 100 if total else float("nan")
        near = f"{nc} / {nt} ({nc / nt * 100:.1f}%)" if nt else "-"
        print(f"| {g} | {level}% | {n} | {total} | {caught} | {rate:.1f}% | {amb} | {near} | {med:.2f}% [{lo:.2f}, {hi:.2f}] |")
    print("\n## How far medians moved between unchanged runs (relative sd and range over the runs)\n")
    print("| command | problem | strategy | median ms | sd, median of rounds | range | sd, first round alone | range |")
    print("|---|---|---|--:|--:|--:|--:|--:|")
    for g, (label, strat), m, sd, rng, sd1, rng1 in spread_rows:
        print(f"| {g} | {label} | {strat} | {m:.4f} | {sd:.2f}% | {rng:.2f}% | {sd1:.2f}% | {rng1:.2f}% |")
    if w:
        print("\n## Wall time per run (s)\n")
        print("| command | runs | median | min | max |")
        print("|---|--:|--:|--:|--:|")
        for g in ("ci-aa", "default-aa", "ci-slow", "default-slow"):
            t = [v[1] for k, v in w.items() if k.startswith(g + "-")]
            if t:
                print(f"| {g} | {len(t)} | {statistics.median(t):.1f} | {min(t):.1f} | {max(t):.1f} |")
        bad = [k for k, v in w.items() if v[0] != 0]
        if bad:
            print(f"\nruns that exited non-zero: {', '.join(bad)}")


if __name__ == "__main__":
    main()
