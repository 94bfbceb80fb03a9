#!/usr/bin/env python3
"""Plots of attnbench reports (attnbench.report/1, peer rows included), as PNG and SVG:

  1. <prefix>_tflops   TFLOP/s against seq_len, one line per strategy (peers dashed), one panel per group of
                       the other problem fields (batch, heads, head_dim, dtype, causal, layout, pages);
  2. <prefix>_launches kernels launched per forward by each strategy, measured vs expected, log scale,
                       at the chosen shape (one panel per matching problem, up to four);
  3. <prefix>_time     median time per strategy at the chosen shape, with TFLOP/s and the ratio to the fastest;
                       when the slowest is over 20x the fastest the axis stays linear and its bar is cut (marked);
  4. <prefix>_bandwidth for decode problems (q_len <= 16): achieved GB/s against the KV length, one line per
                       strategy, under the measured copy bandwidth of the device (right axis: %copy).

Error bars are the measured noise (stdev / mean of the samples) around each median. Ceilings measured on the
device and recorded in the report are drawn where they apply: the copy bandwidth (device.copy_bandwidth_gbps)
on the bandwidth plot, a peak TFLOP/s (device.peak_tflops) on the throughput plot when the report has one.
Reports from the CPU reference backend say so in every title (their times are CPU times).

Reads the reports with no binary (attnbench.reports: the rows flattened exactly as `attnbench report FILE
--format=json` does, with the binary's labels and keys).
Needs matplotlib:  pip install matplotlib
Usage:
  python3 scripts/plot_report.py out.json                                  # -> plots/out_*.png, .svg
  python3 scripts/plot_report.py base.json slowed.json --out=plots --prefix=ci
  python3 scripts/plot_report.py out.json --shape "B=32 H=12 S=512 D=64"   # the shape of plots 2 and 3
Shape tokens: B= H= S= D= P= ps= dtype (fp16|bf16), layout (contiguous|paged), causal / noncausal; rows
matching every token are chosen (default: the first problem of the first report). When several reports hold
the same (problem, strategy), each line or bar is labelled with its report's file name.
"""
import argparse
import json
import math
import os
import sys

from .atomic_file import WriteError, write_atomic
from .reports import ReportError, read_flat

ORDER = ["nested", "head_batched", "fully_batched", "ptr_array", "fused",
         "peer:torch-flash", "peer:torch-cudnn", "peer:torch-efficient", "peer:torch-unfused"]
SHAPE_KEYS = {"B": "batch", "H": "heads", "S": "seq_len", "D": "head_dim", "P": "pages", "ps": "page_size"}
MAX_PANELS = 12
DECODE_MAX_Q = 16  # a problem with at most this many queries per sequence is decode (as peer_torch)
CUT_RATIO = 20  # the time plot cuts bars longer than this many times the fastest instead of a log axis


class UsageError(Exception):
    pass


# ---- data ---------------------------------------------------------------------------------------------

def load(paths):
    """The rows of every report as the binary reads them (the flat rows of `attnbench report --format=json`,
    with the binary's own label and key), each with 'series' (strategy, or 'strategy (file)' when reports
    overlap) and 'report' (the file's name). Returns ([(path, flat document)], rows)."""
    docs = []
    for path in paths:
        try:
            docs.append((path, read_flat(path)))
        except ReportError as e:
            raise UsageError(str(e)) from None
    for _, doc in docs:
        for r in doc["rows"]:
            _FACTS[_text(r["problem"])] = (r["key"], r["label"])
    seen, overlap = {}, False
    for path, doc in docs:
        for r in doc["rows"]:
            k = (r["key"], r["strategy"])
            overlap |= k in seen and seen[k] != path
            seen.setdefault(k, path)
    rows = []
    for path, doc in docs:
        name = os.path.splitext(os.path.basename(path))[0]
        for r in doc["rows"]:
            r = dict(r)
            r["series"] = f"{r['strategy']} ({name})" if overlap else r["strategy"]
            r["report"] = name
            rows.append(r)
    return docs, rows


# The binary's key and label of every problem read, by the problem's JSON text (filled by load), for the
# plots that start from a problem.
_FACTS = {}


def _text(p):
    return json.dumps(p, sort_keys=True)


def problem_key(p):
    return _FACTS[_text(p)][0]


def label(p):
    return _FACTS[_text(p)][1]


def median(r):
    m = r.get("median_ms")
    return m if r.get("status") == "ok" and isinstance(m, (int, float)) and m > 0 else None


def series_order(rows):
    def rank(s):
        base = s.split(" (")[0]
        return (ORDER.index(base) if base in ORDER else len(ORDER), s)
    return sorted({r["series"] for r in rows}, key=rank)


def style_of(series, all_series):
    """Same colour for a strategy everywhere; peers dashed with square markers; the copy of a strategy from a
    second (third) report gets another line style and hollow markers; fused drawn heavier."""
    import matplotlib.pyplot as plt
    base = series.split(" (")[0]
    if base in ORDER:  # the built-in strategies and the known peers: tab10, one colour each
        color = plt.get_cmap("tab10").colors[ORDER.index(base)]
    else:  # plugins and other peers: a second palette, so that they never take a built-in's colour
        extras = [b for b in dict.fromkeys(x.split(" (")[0] for x in all_series) if b not in ORDER]
        color = plt.get_cmap("Dark2").colors[extras.index(base) % 8]
    copies = [s for s in all_series if s.split(" (")[0] == base]
    nth = copies.index(series) % 3
    peer = base.startswith("peer:")
    styles = ("--", (0, (5, 1, 1, 1)), (0, (1, 1))) if peer else ("-", ":", "-.")
    return {"color": color, "linestyle": styles[nth], "marker": "s" if peer else "o", "markersize": 5,
            "markerfacecolor": color if nth == 0 else "white", "linewidth": 2.6 if base == "fused" else 1.8}


def parse_shape(text):
    want = {}
    for tok in text.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            if k not in SHAPE_KEYS:
                raise UsageError(f"--shape: unknown key '{k}' (use B= H= S= D= P= ps=)")
            try:
                want[SHAPE_KEYS[k]] = int(v)
            except ValueError:
                raise UsageError(f"--shape: '{tok}' needs a whole number") from None
        elif tok in ("fp16", "bf16"):
            want["dtype"] = tok
        elif tok in ("contiguous", "paged"):
            want["kv_layout"] = tok
        elif tok in ("causal", "noncausal"):
            want["causal"] = tok == "causal"
        else:
            raise UsageError(f"--shape: cannot read '{tok}'")
    return want


def chosen_problems(rows, shape):
    """Distinct problems matching the --shape tokens (all of them), in report order."""
    want = parse_shape(shape) if shape else None
    out, seen = [], set()
    for r in rows:
        p = r.get("problem", {})
        if want and any(p.get(k) != v for k, v in want.items()):
            continue
        k = problem_key(p)
        if k not in seen:
            seen.add(k)
            out.append(p)
        if not want:
            break
    if not out:
        raise UsageError(f"--shape '{shape}': no row of the reports has that shape")
    return out


def panel_groups(rows):
    """Rows grouped for plot 1: every problem field but seq_len; the page split by whichever of pages and
    page_size varies less in the group (a fixed page count, or a fixed page size as in paged-prefill)."""
    base = {}
    for r in rows:
        p = r.get("problem", {})
        k = tuple(p.get(f) for f in ("batch", "heads", "head_dim", "dtype", "causal", "kv_layout")) + (
            p.get("kv_heads", p.get("heads")), p.get("q_len") if p.get("q_len", p.get("seq_len")) != p.get("seq_len") else None)
        base.setdefault(k, []).append(r)
    groups = {}
    for k, rs in base.items():
        pages = {r["problem"].get("pages", 1) for r in rs}
        sizes = {r["problem"].get("page_size") for r in rs}
        by = "pages" if len(pages) <= len(sizes) else "page_size"
        for r in rs:
            groups.setdefault(k + (by, r["problem"].get(by)), []).append(r)
    return groups


def group_title(key):
    b, h, d, dtype, causal, layout, kvh, q, by, v = key
    page = (f"P={v}" if v != 1 else "1 page") if by == "pages" else f"ps={v}"
    heads = f"H={h}" + (f" KVH={kvh}" if kvh != h else "") + (f" q={q}" if q is not None else "")
    return f"B={b} {heads} D={d} {dtype}{' causal' if causal else ''}, {layout}, {page}"


# ---- figures -------------------------------------------------------------------------------------------

def device_title(docs):
    """The devices of the reports; a CPU-backend report is named as such (its times are CPU times)."""
    names = []
    for _, d in docs:
        dev = d.get("device") or {}
        n = dev.get("name", "unknown device")
        if dev.get("backend") == "cpu":
            n = f"the CPU reference backend ({n}; CPU times, not a GPU)"
        if n not in names:
            names.append(n)
    return " vs ".join(names)


def noise(r):
    """The row's measured relative noise (stdev / mean of its samples), 0 when unknown."""
    x = r.get("noise")
    return x if isinstance(x, (int, float)) and x > 0 and math.isfinite(x) else 0.0


def rate_error(r, key):
    """Error bar of a rate (TFLOP/s, GB/s): the rate is work / time, so its relative error is the time's noise."""
    v = r.get(key)
    return v * noise(r) if isinstance(v, (int, float)) else 0.0


def clipped_errors(pts):
    """matplotlib's [lower, upper] error bars of (x, value, error) points; the lower bar stops at zero (a noise
    over 100% would otherwise reach below it)."""
    return [[min(e, y) for _, y, e in pts], [e for _, _, e in pts]]


def device_ceiling(docs, key):
    """A measured ceiling recorded in the reports' device (copy_bandwidth_gbps, peak_tflops): the one value when
    every report that has it agrees to 1%, else None (two devices: no single line applies)."""
    vals = [(d.get("device") or {}).get(key) for _, d in docs]
    vals = [v for v in vals if isinstance(v, (int, float)) and v > 0]
    if not vals or max(vals) > min(vals) * 1.01:
        return None
    return max(vals)


def is_decode(p):
    return int(p.get("q_len", p.get("seq_len", 0))) <= DECODE_MAX_Q


def plot_tflops(plt, docs, rows, all_series):
    groups = panel_groups([r for r in rows if median(r) and isinstance(r.get("tflops"), (int, float))])
    if not groups:
        return None
    keys = list(groups)[:MAX_PANELS]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    lines = any(len({r["problem"]["seq_len"] for r in groups[k]}) > 1 for k in keys)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol + (2.6 if lines else 1.5), 3.9 * nrow + 0.9), squeeze=False)
    handles = {}
    for ax, key in zip(axes.flat, keys):
        rs = groups[key]
        seqs = sorted({r["problem"]["seq_len"] for r in rs})
        if len(seqs) == 1:  # one point per strategy: bars say more than a column of dots
            tflops_bars(ax, rs, all_series, handles)
            ax.set_title(group_title(key) + f", S={seqs[0]}", fontsize=10)
            continue
        for s in all_series:
            pts = sorted((r["problem"]["seq_len"], r["tflops"], rate_error(r, "tflops")) for r in rs if r["series"] == s)
            if pts:
                line = ax.errorbar([x for x, _, _ in pts], [y for _, y, _ in pts], yerr=clipped_errors(pts),
                                   label=s, capsize=3, elinewidth=1, **style_of(s, all_series))
                handles[s] = line
        if len(seqs) > 1 and seqs[-1] / seqs[0] >= 4:
            ax.set_xscale("log", base=2)
        ax.set_xticks(seqs)
        ax.set_xticklabels([str(s) for s in seqs], rotation=45 if len(seqs) > 6 else 0)
        ax.minorticks_off()
        ax.set_title(group_title(key), fontsize=10)
        ax.set_xlabel("seq_len (tokens)")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    peak = device_ceiling(docs, "peak_tflops")
    for ax, key in zip(axes.flat, keys):
        if peak and not all(is_decode(r["problem"]) for r in groups[key]):  # decode: the bandwidth plot's ceiling
            ax.axhline(peak, color="black", linestyle=":", linewidth=1.2)
            ax.text(ax.get_xlim()[0], peak, f" measured peak {peak:.3g} TFLOP/s", va="bottom", fontsize=8)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    order = [s for s in all_series if s in handles]
    if lines:
        fig.legend([handles[s] for s in order], order, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9,
                   title="strategy (dashed: PyTorch peers)", title_fontsize=9, frameon=False)
    more = f" (first {MAX_PANELS} of {len(groups)} groups)" if len(groups) > MAX_PANELS else ""
    fig.suptitle(f"Attention forward throughput on {device_title(docs)}{more}\n"
                 "FLOPs as the binary counts them (4·B·H·q·S·D, fewer when causal) / median time; error bars: measured noise"
                 + ("" if peak else "; the reports record no measured peak TFLOP/s"), fontsize=11)
    fig.tight_layout()
    return fig


def bar_colors(series, st):
    """(fill, edge) of a bar: solid for the first report, hollow for others; a peer's hatch (drawn in the edge
    colour) is white on a solid bar so it shows."""
    hollow = st["markerfacecolor"] == "white"
    if hollow:
        return "white", st["color"]
    return st["color"], "white" if series.startswith("peer:") else st["color"]


def tflops_bars(ax, rs, all_series, handles):
    names = [s for s in all_series if any(r["series"] == s for r in rs)]
    for i, s in enumerate(names):
        r = next(r for r in rs if r["series"] == s)
        st = style_of(s, all_series)
        fill, edge = bar_colors(s, st)
        bar = ax.bar(i, r["tflops"], 0.75, color=fill, edgecolor=edge, hatch="//" if s.startswith("peer:") else None,
                     linewidth=1.5, yerr=rate_error(r, "tflops"), capsize=3, error_kw={"elinewidth": 1})
        ax.bar_label(bar, labels=[f"{r['tflops']:.0f}"], fontsize=8, padding=2)
        handles.setdefault(s, bar)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, axis="y", alpha=0.3)


def launch_counts(r):
    return r.get("launches_measured"), r.get("launches_expected")


def plot_launches(plt, docs, rows, problems, all_series):
    problems = problems[:4]
    width = max(7.0, 1.0 + 0.95 * len({s.split(" (")[0] for s in all_series}))
    fig, axes = plt.subplots(1, len(problems), figsize=(width * len(problems), 4.8), squeeze=False)
    any_bar = False
    for ax, p in zip(axes.flat, problems):
        key = problem_key(p)
        rs = {r["series"]: r for r in rows if problem_key(r.get("problem", {})) == key}
        # Another report's copy of a strategy is shown only when its counts differ from the first copy's.
        firsts, names = {}, []
        for s in all_series:
            if s not in rs:
                continue
            counts = json.dumps(launch_counts(rs[s]))
            base = s.split(" (")[0]
            if base in firsts and firsts[base] == counts:
                continue
            firsts.setdefault(base, counts)
            names.append(s)
        measured = [rs[s].get("launches_measured") for s in names]
        expected = [rs[s].get("launches_expected") for s in names]
        xs = range(len(names))
        w = 0.38
        for i, (m, e) in enumerate(zip(measured, expected)):
            color = style_of(names[i], all_series)["color"]
            if isinstance(e, (int, float)) and e > 0:
                b = ax.bar(i - w / 2, e, w, color="white", edgecolor=color, hatch="//", linewidth=1.2)
                ax.bar_label(b, labels=[str(e)], fontsize=8, padding=2)
                any_bar = True
            if isinstance(m, (int, float)) and m > 0:
                b = ax.bar(i + w / 2, m, w, color=color, edgecolor=color)
                ax.bar_label(b, labels=[str(m) + ("!" if isinstance(e, (int, float)) and e >= 0 and e != m else "")],
                             fontsize=8, padding=2)
                any_bar = True
            if not (isinstance(m, (int, float)) and m > 0) and not (isinstance(e, (int, float)) and e > 0):
                ax.text(i, 1.05, rs[names[i]].get("status", "no data") if median(rs[names[i]]) is None else "not counted",
                        ha="center", va="bottom", fontsize=7, rotation=90, color="gray")
        ax.set_yscale("log")
        ax.set_ylim(0.5, max([x for x in measured + expected if isinstance(x, (int, float)) and x > 0] + [1]) * 3)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=9)
        ax.set_ylabel("kernels per forward (log scale)")
        ax.set_title(label(p), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3, which="both")
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(facecolor="white", edgecolor="black", hatch="//", label="expected (launch contract)"),
                        Patch(facecolor="gray", label="measured (CUPTI / torch.profiler); ! = differs")],
               loc="upper right", fontsize=8, frameon=False, ncol=2)
    fig.suptitle(f"Kernel launches per forward on {device_title(docs)}", fontsize=11, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig if any_bar else None


def plot_time(plt, docs, rows, problem, all_series):
    """One report: bars sorted fastest first. Several: bars in strategy order, each report's copy of a strategy
    next to the first report's, annotated with its change against it."""
    key = problem_key(problem)
    rs = [r for r in rows if problem_key(r.get("problem", {})) == key]
    timed = [r for r in rs if median(r)]
    untimed = [r for r in rs if not median(r)]
    several = len(docs) > 1
    if several:
        timed.sort(key=lambda r: all_series.index(r["series"]))
    else:
        timed.sort(key=median)
    first_of = {}
    for r in timed:
        first_of.setdefault(r["series"].split(" (")[0], r)
    n = len(timed) + len(untimed)
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.36 * max(n, 2)))
    best = min((median(r) for r in timed), default=None)
    names = [r["series"] for r in timed] + [r["series"] for r in untimed]
    ys = list(range(n))[::-1]
    # A linear axis keeps the proportions readable; bars past `cap` (over CUT_RATIO x the fastest) are cut there,
    # marked with a zig-zag and labelled with their full time, instead of a log axis that flattens the rest.
    longest = max((median(r) for r in timed), default=None)
    cut = bool(timed) and longest / best > CUT_RATIO
    if cut:
        inliers = [median(r) for r in timed if median(r) <= CUT_RATIO * best]
        cap = max(inliers) * 2.2
    else:
        cap = (longest or 1.0) * 1.7
    for y, r in zip(ys, timed):
        st = style_of(r["series"], all_series)
        peer = r["series"].startswith("peer:")
        fill, edge = bar_colors(r["series"], st)
        m = median(r)
        clipped = m > cap
        err = m * noise(r)
        # The error bar stops at zero and at the axis end; the text starts after it (at most a tenth of the axis).
        xerr = None if clipped else [[min(err, m)], [min(err, cap - m)]]
        ax.barh(y, min(m, cap), color=fill, edgecolor=edge, hatch="//" if peer else None, linewidth=1.5,
                xerr=xerr, capsize=3, error_kw={"elinewidth": 1})
        tf = r.get("tflops")
        text = f" {m:.4g} ms"
        text += f" ±{noise(r) * 100:.1f}%" if noise(r) else ""
        text += (f"  {tf:.1f} TFLOP/s" if tf >= 1 else f"  {tf:.2g} TFLOP/s") if isinstance(tf, (int, float)) else ""
        text += f"  {m / best:.2f}x the fastest" if best else ""
        ref = first_of[r["series"].split(" (")[0]]
        if several and ref is not r:
            text += f"  ({(m / median(ref) - 1) * 100:+.1f}% vs {ref['report']})"
        if clipped:  # the bar is cut at the axis end: a zig-zag across it, the text inside (white on a solid bar)
            ink = edge if fill == "white" else "white"
            zig = [cap * (0.93 + 0.02 * (k % 2)) for k in range(7)]
            ax.plot(zig, [y - 0.4 + 0.8 * k / 6 for k in range(7)], color=ink, linewidth=3, zorder=3)
            ax.text(cap * 0.91, y, f"bar cut: {text.strip()} ", va="center", ha="right", fontsize=8.5,
                    color=ink, fontweight="bold", zorder=4)
        else:
            ax.text(m + min(err, cap - m, 0.1 * cap), y, text, va="center", fontsize=8.5,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
    for y, r in zip(ys[len(timed):], untimed):
        reason = (r.get("reason") or "").replace("\n", " ")
        ax.text(0, y, f" {r.get('status', '?')}: {reason[:90]}", va="center", fontsize=8, color="gray")
    ax.set_yticks(ys)
    ax.set_yticklabels(names, fontsize=9)
    ax.set_xlim(0, cap)
    hot = all((d.get("settings") or {}).get("hot") for _, d in docs)
    ax.set_xlabel(f"median time per forward (ms), error bars: measured noise; "
                  f"{'hot L2' if hot else 'L2 flushed before every sample'}"
                  + (f"; bars over {CUT_RATIO}x the fastest are cut" if cut else ""))
    ax.grid(True, axis="x", alpha=0.3, which="both")
    order = "grouped by strategy" if several else "sorted fastest first"
    ax.set_title(f"{label(problem)} on {device_title(docs)}\n{order}; hatched: PyTorch peers", fontsize=10)
    fig.tight_layout()
    return fig


def decode_title(key):
    b, h, kvh, q, d, dtype, causal, layout = key
    return f"B={b} H={h} KVH={kvh} q={q} D={d} {dtype}{' causal' if causal else ''}, {layout}"


def plot_bandwidth(plt, docs, rows, all_series):
    """Decode is memory-bound: achieved GB/s (bytes of Q, K, V and O moved once / median time) against the KV
    length, under the device's measured copy bandwidth; the right axis reads the same as %copy."""
    rs = [r for r in rows if median(r) and is_decode(r.get("problem", {})) and isinstance(r.get("gbps"), (int, float))]
    if not rs:
        return None
    groups = {}
    for r in rs:
        p = r["problem"]
        k = (p.get("batch"), p.get("heads"), p.get("kv_heads", p.get("heads")), p.get("q_len", p.get("seq_len")),
             p.get("head_dim"), p.get("dtype"), bool(p.get("causal")), p.get("kv_layout"))
        groups.setdefault(k, []).append(r)
    keys = list(groups)[:MAX_PANELS]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    copy = device_ceiling(docs, "copy_bandwidth_gbps")
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.6 * ncol + 2.6, 4.1 * nrow + 0.9), squeeze=False)
    handles = {}
    for ax, key in zip(axes.flat, keys):
        g = groups[key]
        seqs = sorted({r["problem"]["seq_len"] for r in g})
        for s in all_series:
            pts = sorted((r["problem"]["seq_len"], r["gbps"], rate_error(r, "gbps")) for r in g if r["series"] == s)
            if not pts:
                continue
            handles[s] = ax.errorbar([x for x, _, _ in pts], [y for _, y, _ in pts], yerr=clipped_errors(pts),
                                     label=s, capsize=3, elinewidth=1, **style_of(s, all_series))
        if len(seqs) > 1 and seqs[-1] / seqs[0] >= 4:
            ax.set_xscale("log", base=2)
        ax.set_xticks(seqs)
        ax.set_xticklabels([str(x) for x in seqs], rotation=45 if len(seqs) > 6 else 0)
        ax.minorticks_off()
        top = max(r["gbps"] + rate_error(r, "gbps") for r in g)
        if copy:
            ax.axhline(copy, color="black", linestyle=":", linewidth=1.4)
            ax.text(ax.get_xlim()[0], copy, f" measured copy bandwidth {copy:.3g} GB/s", va="bottom", fontsize=8)
            top = max(top, copy)
            sec = ax.secondary_yaxis("right", functions=(lambda v, c=copy: v / c * 100, lambda v, c=copy: v * c / 100))
            sec.set_ylabel("% of copy bandwidth")
        ax.set_ylim(0, top * 1.12)
        ax.set_title(decode_title(key), fontsize=10)
        ax.set_xlabel("KV length seq_len (tokens)")
        ax.set_ylabel("achieved GB/s")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    order = [s for s in all_series if s in handles]
    fig.legend([handles[s] for s in order], order, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9,
               title="strategy (dashed: PyTorch peers)", title_fontsize=9, frameon=False)
    more = f" (first {MAX_PANELS} of {len(groups)} groups)" if len(groups) > MAX_PANELS else ""
    ceiling = ("dotted: the device's measured copy bandwidth" if copy
               else "the reports record no single measured copy bandwidth")
    fig.suptitle(f"Decode bandwidth on {device_title(docs)}{more}\n"
                 f"bytes of Q, K, V, O moved once / median time; error bars: measured noise; {ceiling}", fontsize=11)
    fig.tight_layout()
    return fig


def save(fig, out, prefix, name, formats):
    paths = []
    for ext in formats:
        path = os.path.join(out, f"{prefix}_{name}.{ext}")
        try:
            write_atomic(path, lambda f: fig.savefig(f, format=ext, dpi=130, bbox_inches="tight"))
        except WriteError as e:
            sys.exit(f"plot_report: {e}")
        paths.append(path)
    return paths


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", help="attnbench.report/1 JSON files")
    ap.add_argument("--out", default="plots", help="output directory (default: plots)")
    ap.add_argument("--prefix", help="file name prefix (default: the first report's name)")
    ap.add_argument("--shape", help='shape of plots 2 and 3, e.g. "B=32 H=12 S=512 D=64" (default: the first)')
    ap.add_argument("--formats", default="png,svg", help="comma list of image formats (default png,svg)")
    ap.add_argument("--attnbench", help=argparse.SUPPRESS)  # older command lines: reports are read without it
    a = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("matplotlib is missing: pip install matplotlib") from None
    docs, rows = load(a.reports)
    if not rows:
        raise UsageError("the reports have no rows")
    problems = chosen_problems(rows, a.shape)
    all_series = series_order(rows)
    prefix = a.prefix or os.path.splitext(os.path.basename(a.reports[0]))[0]
    os.makedirs(a.out, exist_ok=True)
    formats = [f.strip() for f in a.formats.split(",") if f.strip()]
    written = []
    for name, fig in (("tflops", plot_tflops(plt, docs, rows, all_series)),
                      ("launches", plot_launches(plt, docs, rows, problems, all_series)),
                      ("time", plot_time(plt, docs, rows, problems[0], all_series)),
                      ("bandwidth", plot_bandwidth(plt, docs, rows, all_series))):
        if fig is None:
            print(f"plot_report: no data for the {name} plot" + (" (no decode rows)" if name == "bandwidth" else ""),
                  file=sys.stderr)
            continue
        written += save(fig, a.out, prefix, name, formats)
        plt.close(fig)
    for p in written:
        print(p)
    return 0


def cli():
    """The `attnbench-plot` console command (and scripts/plot_report.py)."""
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"plot_report: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    cli()
