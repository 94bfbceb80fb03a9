#!/usr/bin/env python3
"""Peer benchmark: PyTorch SDPA (flash, cuDNN, memory-efficient and math backends), the unfused
matmul -> softmax -> matmul and, for decode, a GQA-packed matmul -> softmax -> matmul, timed the way attnbench
times its strategies, written as attnbench.report/1 rows named peer:torch-flash, peer:torch-cudnn,
peer:torch-efficient, peer:torch-math, peer:torch-unfused, peer:torch-gqa-packed, so they sit beside
attnbench's rows in `attnbench report`, `attnbench compare` and scripts/plot_report.py.

Run it on the GPU machine with that machine's PyTorch (Python 3.12; only torch and the standard library), as
`attnbench-peer` once the package is installed or as scripts/peer_torch.py from the source tree:

  python3 scripts/peer_torch.py --batch=32 --heads=12 --seq_len=512 --head_dim=64 --json peer.json
  python3 scripts/peer_torch.py --batch=2 --heads=16 --seq_len=8192 --head_dim=128 --causal=false,true --json long.json
  python3 scripts/peer_torch.py --config=gpt2 --json gpt2-peer.json         # a suite from configs/
  python3 scripts/peer_torch.py --merge out.json     # peers for every shape of an attnbench report, appended to it
  python3 scripts/peer_torch.py --dry-run --json p.json   # no GPU needed: rows with status unsupported
  python3 scripts/peer_torch.py --dry-run --config=llama3.1-8b-decode   # no torch needed: the planned calls

Sizes take a value, a list (1,8,32) or a range (128:4096:*2 geometric, 64:256:+64 arithmetic), as the CLI:
the grid is expanded by `attnbench grid` ($ATTNBENCH, else the build tree's or the install's binary, else the PATH),
which also gives every problem's FLOPs and bytes (what TFLOP/s and GB/s divide, for --merge shapes too).
Timing: CUDA events around one forward, a spin kernel queued first so host-side dispatch is not timed,
L2 flushed before every sample unless --hot, warm-up, then samples until the relative noise (stdev / mean)
is at or under --max-noise (after --min-samples) or --max-time runs out; the median is reported.
Inputs are random normal (never zeros). Peers use contiguous K/V, pages=1, page_size=seq_len: a paged
problem runs contiguous (the report says so). Inference shapes (docs/inference-shapes.md): GQA/MQA through
enable_gqa=True (PyTorch >= 2.5; an older one, or a backend refusing it, is an unsupported row with its
reason); q_len != seq_len causal through an explicit boolean bottom-right mask (PyTorch's is_causal is
top-left there); ragged batches padded to the longest sequence with a key-padding mask (FLOPs and bytes are
the binary's, counting the real lengths). Every SDPA backend runs every problem or says why not.
Exit codes: 0 ok, 1 some row failed or failed verification, 2 bad arguments or an unusable --merge file.
"""
import argparse
import datetime
import json
import math
import os
import shlex
import statistics
import sys
import tempfile
import time
import warnings

from .atomic_file import WriteError, write_atomic
from . import rows as binary_rows
from .rows import RowsError, find_binary

SCHEMA = "attnbench.report/1"
# Every PyTorch SDPA backend, the unfused matmul-softmax-matmul, and a GQA-packed matmul-softmax-matmul run for
# decode shapes only (q_len <= DECODE_MAX_Q; no row for other problems).
BACKENDS = ("flash", "cudnn", "efficient", "math", "unfused", "gqa-packed", "flex")
# The default list: every backend but flex (FlexAttention compiles a kernel per problem, seconds each; it runs
# the variants SDPA has not: give --backends=...,flex or --backends=all).
DEFAULT_BACKENDS = BACKENDS[:-1]
SDPA_ENUM = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
             "math": "MATH"}
DECODE_MAX_Q = 16
TOLERANCE = {"fp16": 5e-3, "bf16": 2e-2}  # relative L2 error, as attnbench's reference check
ELEMENT_BYTES = {"fp16": 2, "bf16": 2}  # of an input element: the memory the unfused peers' score matrices need


class UsageError(Exception):
    pass


# ---- grid --------------------------------------------------------------------------------------------

def attnbench_binary():
    """The attnbench binary that expands grids (rows.find_binary: $ATTNBENCH, the build tree, the PATH)."""
    try:
        return find_binary()
    except RowsError as e:
        raise UsageError(str(e)) from None


def ask_grid(args):
    """The problems `attnbench grid ARGS --format=json` expands to: the binary owns the axis grammar and suites."""
    try:
        return binary_rows.ask_grid(attnbench_binary(), args)
    except (RowsError, OSError) as e:
        raise UsageError(str(e)) from None


def peer_problem(p):
    """The problem a peer runs: the attnbench problem's shape, KV heads, query length, lengths, dtype and mask,
    with contiguous K/V in one page (PyTorch has no paged SDPA; a paged problem runs contiguous, and says so).
    Problems of reports from before the inference axes read as self-attention."""
    s = int(p["seq_len"])
    out = {"batch": int(p["batch"]), "heads": int(p["heads"]), "kv_heads": int(p.get("kv_heads", p["heads"])),
           "seq_len": s, "q_len": int(p.get("q_len", s)), "head_dim": int(p["head_dim"]), "pages": 1,
           "page_size": s, "pages_requested": 1, "kv_layout": "contiguous", "dtype": p.get("dtype", "fp16"),
           "causal": bool(p.get("causal", False))}
    if isinstance(p.get("kv_lens_values"), list):
        out["kv_lens"] = p.get("kv_lens", "list")
        out["kv_lens_values"] = [int(x) for x in p["kv_lens_values"]]
    for variant in ("window", "softcap", "head_dim_v"):  # kept, so that the rows match attnbench's problem
        if int(p.get(variant, 0) or 0) > 0:
            out[variant] = int(p[variant])
    if p.get("sinks") is True:
        out["sinks"] = True
    if isinstance(p.get("q_lens_values"), list):  # a mixed batch: kept, so that its rows say why they are not run
        out["q_lens"] = p.get("q_lens", "list")
        out["q_lens_values"] = [int(x) for x in p["q_lens_values"]]
    if p.get("kv_dtype") == "fp8_e4m3":  # an FP8 K/V cache: kept, so that its rows say why they are not run
        out["kv_dtype"] = "fp8_e4m3"
        out["kv_scale"] = p.get("kv_scale", "tensor")
    return out


def window(p):
    """The problem's sliding window (a query sees no key before its position minus it), 0 for none."""
    return int(p.get("window", 0) or 0)


def softcap(p):
    """The problem's logit soft-cap (scaled scores s become cap * tanh(s / cap)), 0 for none."""
    return float(p.get("softcap", 0) or 0)


def variant_refusal(p, backend=None):
    """The reason a problem's variant is not run by `backend` here, or None. A window goes in the boolean mask
    (mask_mode), or flex's block mask; no SDPA backend has soft-capping or attention sinks, FlexAttention has both
    (a score_mod, and the sink in each row's denominator through the log-sum-exp flex returns); a value head dim
    of its own (MLA) is not posed here yet."""
    if int(p.get("head_dim_v", 0) or 0) not in (0, int(p["head_dim"])):
        return "a value head dim of its own (head_dim_v; this peer poses V as wide as K)"
    if isinstance(p.get("q_lens_values"), list):
        return "a mixed batch (per-sequence query counts, q_lens; this peer poses one q_len for every sequence)"
    if p.get("kv_dtype") == "fp8_e4m3":
        return "an FP8 K/V cache (kv_dtype; this peer poses K and V in the --dtype)"
    if backend == "flex":
        return None
    if softcap(p) > 0:
        return "logit soft-capping (no PyTorch SDPA backend has it; --backends=flex runs it)"
    if p.get("sinks") is True:
        return "attention sinks (no PyTorch SDPA backend has them; --backends=flex runs them)"
    return None


def problem_key(p):
    """Identity of a problem as attnbench compares it (every field but pages_requested)."""
    return json.dumps({k: v for k, v in p.items() if k != "pages_requested"}, sort_keys=True)


def grid_from_flags(a):
    args = [f"--{k}={v}" for k, v in (("batch", a.batch), ("heads", a.heads), ("kv_heads", a.kv_heads),
                                      ("seq_len", a.seq_len), ("q_len", a.q_len), ("kv_lens", a.kv_lens),
                                      ("head_dim", a.head_dim), ("dtype", a.dtype), ("causal", a.causal),
                                      ("window", a.window), ("softcap", a.softcap), ("sinks", a.sinks))
            if v is not None]
    return [(peer_problem(p), p) for p in ask_grid(args)]


def grid_from_config(name):
    """Problems of an attnbench suite (configs/NAME.json or a path), each with the attnbench problem it stands for."""
    return [(peer_problem(p), p) for p in ask_grid([f"--config={name}"])]


def grid_from_report(report):
    """The distinct problems of an attnbench report's rows, as contiguous single-page problems."""
    problems = []
    for row in report.get("results", []):
        p = row.get("problem", {})
        try:
            problems.append((peer_problem(p), p))
        except (KeyError, TypeError, ValueError):
            continue
    return problems


def unique(problems):
    seen, out = set(), []
    for p, original in problems:
        k = problem_key(p)
        if k not in seen:
            seen.add(k)
            out.append((p, original))
    return out


def kv_lens(p):
    return p.get("kv_lens_values") or [p["seq_len"]] * p["batch"]


def group(p):
    return p["heads"] // p["kv_heads"]


def ragged(p):
    return "kv_lens_values" in p


def suite_grid(p):
    """A peer problem as one grid of an attnbench suite (its only problem)."""
    g = {k: p[k] for k in ("batch", "heads", "kv_heads", "q_len", "head_dim", "dtype", "causal")}
    g.update(pages=1, kv_layout="contiguous")
    g.update({k: p[k] for k in ("window", "softcap", "sinks", "head_dim_v", "kv_dtype", "kv_scale") if p.get(k)})
    if isinstance(p.get("q_lens_values"), list):
        g["q_lens"] = "list:" + ",".join(str(n) for n in p["q_lens_values"])
    if ragged(p):
        g["kv_lens"] = "list:" + ",".join(str(n) for n in p["kv_lens_values"])
    else:
        g["seq_len"] = p["seq_len"]
    return g


def work_key(p):
    """What FLOPs and bytes depend on: every field but the paging."""
    fields = ("batch", "heads", "kv_heads", "seq_len", "q_len", "head_dim", "dtype", "causal", "window", "softcap",
              "sinks", "head_dim_v", "kv_dtype", "kv_scale")
    return tuple(p.get(k) or 0 for k in fields) + (tuple(p.get("kv_lens_values") or ()),
                                                   tuple(p.get("q_lens_values") or ()))


def ask_work(problems):
    """{problem_key(p): (flops, bytes)} of every peer problem, as the binary counts them (`attnbench grid`: the
    numbers every attnbench row's TFLOP/s and GB/s divide; bottom-right causal, real ragged lengths, K and V once
    per KV head), asked once for all of them through a suite of one grid per problem."""
    if not problems:
        return {}
    with tempfile.TemporaryDirectory(prefix="peer_torch.") as tmp:
        suite = os.path.join(tmp, "peer-problems.json")
        with open(suite, "w") as f:
            json.dump({"name": "peer-problems", "description": "the problems peer_torch runs",
                       "grids": [suite_grid(p) for p, _ in problems]}, f)
        grid = ask_grid([f"--config={suite}"])
    counted = {work_key(g): (float(g["flops"]), float(g["bytes"])) for g in grid}
    work = {}
    for p, _ in problems:
        if work_key(p) not in counted:
            raise UsageError(f"attnbench grid did not return the problem {label(p)}")
        work[problem_key(p)] = counted[work_key(p)]
    return work


# ---- the plan of one (problem, backend): what is called, with which mask and GQA handling ---------------

def mask_mode(p):
    """How the mask is given: "none", "is_causal" (q_len = seq_len: top-left and bottom-right agree), or "bool":
    an explicit boolean [B, 1, q_len, seq_len] mask, bottom-right causal (query i of a sequence of length L
    sees keys 0 .. i + L - q_len) and/or key padding past a ragged sequence's length. PyTorch's is_causal is
    top-left aligned when q_len != seq_len, a different mask, so it is not used there."""
    if ragged(p) or window(p):
        return "bool"
    if not p["causal"]:
        return "none"
    return "is_causal" if p["q_len"] == p["seq_len"] else "bool"


def plan(p, backend, original=None):
    """The planned call of `backend` on `p`: {"call": text, "notes": [...]} or {"skip": reason} (no row)."""
    B, H, KVH, S, Q, D = p["batch"], p["heads"], p["kv_heads"], p["seq_len"], p["q_len"], p["head_dim"]
    g, mode = group(p), mask_mode(p)
    notes = []
    if original is not None and original.get("kv_layout") == "paged":
        notes.append("paged KV run contiguous")
    if ragged(p):
        notes.append(f"ragged: padded to the longest ({S}) with a key-padding mask")
    if mode == "bool" and p["causal"]:
        notes.append("causal bottom-right via explicit bool mask")
    if window(p):
        notes.append(f"sliding window {window(p)} via explicit bool mask")
    mask_arg = {"none": "attn_mask=None", "is_causal": "is_causal=True",
                "bool": f"attn_mask=bool[{B},1,{Q},{S}]"}[mode]
    qs, ks = f"q[{B},{H},{Q},{D}]", f"k[{B},{KVH},{S},{D}]"
    if backend in SDPA_ENUM:
        gqa = ", enable_gqa=True" if g > 1 else ""
        if g > 1:
            notes.append("GQA via enable_gqa")
        call = (f"with sdpa_kernel(SDPBackend.{SDPA_ENUM[backend]}): "
                f"F.scaled_dot_product_attention({qs}, {ks}, v[{B},{KVH},{S},{D}], {mask_arg}{gqa})")
    elif backend == "unfused":
        rep = f".repeat_interleave({g}, dim=1)" if g > 1 else ""
        if g > 1:
            notes.append("GQA via K/V repeat_interleave")
        call = f"softmax(({qs} * scale) @ k{rep}^T [{mask_arg}]) @ v{rep}"
    elif backend == "flex":
        notes = [n.replace("explicit bool mask", "the block mask") for n in notes]
        mods = []
        if softcap(p) > 0:
            mods.append(f"score_mod cap*tanh(s/cap), cap {softcap(p):g}")
        if p.get("sinks") is True:
            mods.append("sinks: out * sigmoid(lse - sink[h]) from return_lse")
        notes.extend(mods)
        if g > 1:
            notes.append("GQA via enable_gqa")
        block = "None" if mode == "none" else f"create_block_mask(mask_mod, {B}, None, {Q}, {S})"
        call = (f"torch.compile(flex_attention)({qs}, {ks}, v[{B},{KVH},{S},{D}], score_mod, block_mask={block}"
                f"{', enable_gqa=True' if g > 1 else ''}{', return_lse=True' if p.get('sinks') is True else ''})")
    elif backend == "gqa-packed":
        if Q > DECODE_MAX_Q:
            return {"skip": f"gqa-packed runs decode shapes only (q_len <= {DECODE_MAX_Q})"}
        notes.append(f"GQA packed: the {g} query heads of a KV head as {g * Q} rows of one matmul")
        call = (f"softmax((q.view({B},{KVH},{g * Q},{D}) * scale) @ k^T [{mask_arg} per packed row], fp32) @ v "
                f"-> view({B},{H},{Q},{D})")
    else:
        raise UsageError(f"unknown backend '{backend}'")
    return {"call": call, "mask": mode, "notes": notes}


# ---- reports -----------------------------------------------------------------------------------------

def write_json_atomic(path, doc):
    text = (json.dumps(doc, indent=2) + "\n").encode()
    try:
        write_atomic(path, lambda f: f.write(text))
    except WriteError as e:
        raise UsageError(str(e)) from None


def read_report(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"'{path}': cannot open file ({e.strerror})") from None
    except ValueError as e:
        raise UsageError(f"'{path}': malformed JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else None
        raise UsageError(f"'{path}': schema is '{got}', expected '{SCHEMA}'")
    if not isinstance(doc.get("results"), list):
        raise UsageError(f"'{path}': report has no 'results' array")
    return doc


def unsupported_row(p, backend, reason):
    return {"problem": p, "strategy": "peer:torch-" + backend, "status": "unsupported", "reason": reason}


def merge_into(report, peer):
    """Appends the peer rows to an attnbench report, replacing earlier rows of the same (problem, strategy)."""
    new_keys = {(problem_key(r["problem"]), r["strategy"]) for r in peer["results"]}
    kept = [r for r in report["results"]
            if (problem_key(r.get("problem", {})), r.get("strategy")) not in new_keys]
    report["results"] = kept + peer["results"]
    report.setdefault("peers", [])
    report["peers"] = [x for x in report["peers"] if x.get("tool") != "peer_torch"] + [
        {"tool": "peer_torch", "torch": peer["tool"]["version"], "command": peer["command"],
         "created": peer["created"], "settings": peer["settings"]}]
    report.setdefault("warnings", [])
    report["warnings"] += [w for w in peer.get("warnings", []) if w not in report["warnings"]]
    return report


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def settings_of(a):
    return {"warmup": a.warmup, "min_samples": a.min_samples, "max_samples": a.max_samples,
            "max_noise": a.max_noise, "max_time_s": a.max_time, "hot": a.hot, "l2_flush": not a.hot,
            "timer": "events", "verify": a.verify, "score_dtype": "input", "seed": a.seed}


# ---- statistics (same definitions as attnbench: noise = stdev / mean) ---------------------------------

def stats(xs):
    mean = statistics.fmean(xs)
    stdev = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return {"median": statistics.median(xs), "mean": mean, "min": min(xs), "max": max(xs), "stdev": stdev,
            "noise": stdev / mean if mean > 0 else 0.0, "samples": len(xs)}


# ---- GPU side ----------------------------------------------------------------------------------------

class Gpu:
    """Everything that needs torch and a CUDA device."""

    def __init__(self, a):
        import torch  # imported here so --dry-run and --help work without torch
        import torch.nn.functional as F
        self.torch, self.F, self.a = torch, F, a
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True  # PyTorch's default
        self.dev = torch.device("cuda", a.device)
        torch.cuda.set_device(self.dev)
        props = torch.cuda.get_device_properties(self.dev)
        self.props = props
        l2 = int(getattr(props, "L2_cache_size", 50 << 20))
        self.flush_buf = torch.empty(max(2 * l2, 8 << 20), dtype=torch.uint8, device=self.dev)
        self.spin_cycles = self._calibrate_spin()
        self.warnings = []

    def device_json(self):
        t, p = self.torch, self.props
        cudnn = t.backends.cudnn.version() if t.backends.cudnn.is_available() else None
        return {"backend": "cuda", "name": t.cuda.get_device_name(self.dev), "cc": f"{p.major}.{p.minor}",
                "sm_count": p.multi_processor_count, "l2_bytes": int(getattr(p, "L2_cache_size", 0)),
                "memory_bytes": int(p.total_memory), "cuda_runtime": t.version.cuda or "",
                "cudnn": str(cudnn) if cudnn else "", "torch": t.__version__}

    def _calibrate_spin(self):
        """Cycles of torch.cuda._sleep that keep the GPU busy ~0.2 ms, so the timed forward is already queued
        when the start event runs (host dispatch never inside the timed region). 0 when unavailable."""
        t = self.torch
        if not hasattr(t.cuda, "_sleep"):
            return 0
        s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        t.cuda._sleep(1000)
        s.record()
        t.cuda._sleep(1_000_000)
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e)
        return int(1_000_000 * 0.2 / ms) if ms > 0 else 0

    def inputs(self, p):
        """Q [B, H, q_len, D]; K, V [B, KVH, seq_len, D], random past a ragged sequence's length (masked)."""
        t = self.torch
        dtype = t.float16 if p["dtype"] == "fp16" else t.bfloat16
        g = t.Generator(device=self.dev)
        g.manual_seed(self.a.seed)
        shapes = [(p["batch"], p["heads"], p["q_len"], p["head_dim"])] + [
            (p["batch"], p["kv_heads"], p["seq_len"], p["head_dim"])] * 2
        return [t.randn(sh, generator=g, device=self.dev, dtype=t.float32).to(dtype) for sh in shapes]

    def bool_mask(self, p):
        """[B, 1, q_len, seq_len], True where query i of sequence b sees key j: j < L_b, and with causal
        j <= i + L_b - q_len (bottom-right)."""
        t = self.torch
        lens = t.tensor(kv_lens(p), device=self.dev).view(-1, 1, 1, 1)
        i = t.arange(p["q_len"], device=self.dev).view(1, 1, -1, 1)
        j = t.arange(p["seq_len"], device=self.dev).view(1, 1, 1, -1)
        m = j < lens
        if p["causal"]:
            m = m & (j <= i + lens - p["q_len"])
        if window(p):
            m = m & (j >= i + lens - p["q_len"] - window(p))
        return m

    def sink_logits(self, p):
        """[H] fp32 sink logits of a problem with sinks (seeded: the same for the forward and its check)."""
        t = self.torch
        g = t.Generator(device=self.dev)
        g.manual_seed(self.a.seed + 1)
        return t.randn(p["heads"], generator=g, device=self.dev, dtype=t.float32)

    def flex_forward(self, p, q, k, v):
        """FlexAttention (torch.compile'd): the mask (key padding, bottom-right causal, window) as a block mask,
        the soft-cap as a score_mod, the sinks in each row's denominator from the log-sum-exp it returns:
        out * sigmoid(lse - sink[h]) = sum_j e^s_j v_j / (e^lse + e^sink)."""
        t = self.torch
        try:
            import inspect
            from torch.nn.attention import flex_attention as fa
        except ImportError:
            raise Unsupported(f"PyTorch {t.__version__} has no FlexAttention (2.5 or later)") from None
        B, Q, S = p["batch"], p["q_len"], p["seq_len"]
        lens = t.tensor(kv_lens(p), device=self.dev, dtype=t.int32)
        causal, w = bool(p["causal"]), window(p)

        def mask_mod(b, h, q_idx, kv_idx):
            last = lens[b]
            m = kv_idx < last
            if causal:
                m = m & (kv_idx <= q_idx + last - Q)
            if w:
                m = m & (kv_idx >= q_idx + last - Q - w)
            return m
        block = None if mask_mode(p) == "none" else fa.create_block_mask(mask_mod, B, None, Q, S, device=self.dev)
        cap = softcap(p)

        def capped(score, b, h, q_idx, kv_idx):
            return cap * t.tanh(score / cap)
        kwargs = {"score_mod": capped if cap > 0 else None, "block_mask": block,
                  "scale": 1.0 / math.sqrt(p["head_dim"])}
        if group(p) > 1:
            kwargs["enable_gqa"] = True
        compiled = t.compile(fa.flex_attention, dynamic=False)
        if p.get("sinks") is not True:
            return lambda: compiled(q, k, v, **kwargs)
        sink = self.sink_logits(p).view(1, -1, 1)
        if "return_aux" in inspect.signature(fa.flex_attention).parameters:  # PyTorch 2.9+
            kwargs["return_aux"] = fa.AuxRequest(lse=True)

            def with_lse():
                out, aux = compiled(q, k, v, **kwargs)
                return out, aux.lse
        else:
            kwargs["return_lse"] = True

            def with_lse():
                return compiled(q, k, v, **kwargs)

        def with_sinks():
            out, lse = with_lse()
            return (out.float() * t.sigmoid(lse.float() - sink).unsqueeze(-1)).to(q.dtype)
        return with_sinks

    def forward(self, backend, p, q, k, v):
        """A callable running one forward of `backend`, or raises with the reason it cannot."""
        t, F = self.torch, self.F
        if backend == "flex":
            return self.flex_forward(p, q, k, v), None
        mode, g = mask_mode(p), group(p)
        mask = self.bool_mask(p) if mode == "bool" else None
        scale = 1.0 / math.sqrt(p["head_dim"])
        if backend in ("unfused", "gqa-packed"):
            rows = p["heads"] * p["q_len"]
            kv_copy = 2 * p["batch"] * p["heads"] * p["seq_len"] * p["head_dim"] if backend == "unfused" and g > 1 else 0
            need = (2 * p["batch"] * rows * p["seq_len"] + kv_copy) * ELEMENT_BYTES[p["dtype"]]
            if backend == "gqa-packed":
                need += 4 * p["batch"] * rows * p["seq_len"]  # fp32 softmax
            free, _ = t.cuda.mem_get_info(self.dev)
            if need > 0.8 * free:
                raise Unsupported(f"the score and probability matrices need {need / 2**30:.1f} GiB, "
                                  f"{free / 2**30:.1f} GiB free")
            if mode == "is_causal":
                mask = self.bool_mask(p)
            if backend == "unfused":
                kk = k.repeat_interleave(g, dim=1) if g > 1 else k
                vv = v.repeat_interleave(g, dim=1) if g > 1 else v

                def unfused():
                    scores = t.matmul(q * scale, kk.transpose(-2, -1))  # in the input dtype, as PyTorch does it
                    if mask is not None:
                        scores.masked_fill_(~mask, float("-inf"))
                    return t.matmul(t.softmax(scores, dim=-1), vv)
                return unfused, None
            B, KVH, Q, D = p["batch"], p["kv_heads"], p["q_len"], p["head_dim"]
            packed_mask = mask.repeat(1, 1, g, 1) if mask is not None else None  # row r*Q + i is query i

            def packed():
                qp = q.reshape(B, KVH, g * Q, D)  # query heads KVH*g..: the g heads of a KV head are adjacent
                scores = t.matmul(qp * scale, k.transpose(-2, -1)).float()
                if packed_mask is not None:
                    scores.masked_fill_(~packed_mask, float("-inf"))
                return t.matmul(t.softmax(scores, dim=-1).to(q.dtype), v).view(B, p["heads"], Q, D)
            return packed, None
        from torch.nn.attention import SDPBackend
        enum_name = SDPA_ENUM[backend]
        if not hasattr(SDPBackend, enum_name):
            raise Unsupported(f"PyTorch {t.__version__} has no SDPBackend.{enum_name}")
        kwargs = {}
        if g > 1:
            kwargs["enable_gqa"] = True  # PyTorch >= 2.5; older ones raise TypeError, reported as unsupported
        if mode == "is_causal":
            kwargs["is_causal"] = True
        elif mask is not None:
            kwargs["attn_mask"] = mask
        return (lambda: F.scaled_dot_product_attention(q, k, v, **kwargs)), getattr(SDPBackend, enum_name)

    def run_row(self, backend, p, planned, work):
        """One timed row; `work` is the problem's (flops, bytes) as the binary counts them (ask_work)."""
        t = self.torch
        row = {"problem": p, "strategy": "peer:torch-" + backend, "status": "ok", "reason": ""}
        try:
            q, k, v = self.inputs(p)
            fn, sdpa = self.forward(backend, p, q, k, v)
            ctx = self._sdpa_context(sdpa)
            with ctx:
                out = self._first_call(fn)
                if self.a.verify:
                    row["verify"] = self.verify(out, p, q, k, v)
                    if not row["verify"]["passed"]:
                        row["status"], row["reason"] = "incorrect", (
                            f"rel_l2_err {row['verify']['rel_l2_err']:.3g} > tolerance {row['verify']['tolerance']:g}")
                        return row
                del out
                times, stop = self.sample(fn)
                launches = self.launches(fn) if self.a.launches else None
        except Unsupported as e:
            return unsupported_row(p, backend, str(e))
        except t.cuda.OutOfMemoryError as e:
            t.cuda.empty_cache()
            return unsupported_row(p, backend, "out of memory: " + str(e).splitlines()[0])
        except Exception as e:  # a backend that broke on a shape it accepted
            if isinstance(e, TypeError) and "enable_gqa" in str(e):  # PyTorch before 2.5
                return unsupported_row(p, backend, f"PyTorch {t.__version__} has no enable_gqa (GQA needs 2.5 or later)")
            t.cuda.empty_cache()
            row.update(status="failed", reason=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            return row
        st = stats(times)
        row.update(time_ms=st, timer="events", stop_reason=stop,
                   tflops=work[0] / (st["median"] * 1e-3) / 1e12, gbps=work[1] / (st["median"] * 1e-3) / 1e9,
                   config={"source": "peer", "torch": t.__version__, "sdpa_backend": SDPA_ENUM.get(backend, "none"),
                           "mask": planned["mask"], "notes": "; ".join(planned["notes"])})
        if launches:
            row["launches"] = {"measured": launches}
        return row

    def _sdpa_context(self, sdpa):
        import contextlib
        if sdpa is None:
            return contextlib.nullcontext()
        from torch.nn.attention import sdpa_kernel
        return sdpa_kernel([sdpa])

    def _first_call(self, fn):
        """The first forward; a backend refusing the shape raises 'No available kernel' after warnings
        saying why, which become the unsupported reason."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = fn()
                self.torch.cuda.synchronize()
                return out
            except RuntimeError as e:
                text = str(e)
                if not any(x in text for x in ("No available kernel", "No viable backend")) and \
                        "not supported" not in text.lower():
                    raise
                why = [str(w.message).strip().replace("\n", " ") for w in caught]
                raise Unsupported("; ".join(why) or str(e).splitlines()[0]) from None

    def verify(self, out, p, q, k, v):
        """Relative L2 error against an fp32 reference, per (batch, query head) against its KV head and the
        sequence's own length, bottom-right causal."""
        t = self.torch
        num = den = 0.0
        scale = 1.0 / math.sqrt(p["head_dim"])
        g, Q = group(p), p["q_len"]
        nonfinite = int((~t.isfinite(out)).sum().item())
        sinks = self.sink_logits(p) if p.get("sinks") is True else None
        for b, L in enumerate(kv_lens(p)):
            i = t.arange(Q, device=self.dev).view(-1, 1)
            j = t.arange(L, device=self.dev).view(1, -1)
            hidden = (j > i + L - Q) if p["causal"] else None
            if window(p):
                before = j < i + L - Q - window(p)
                hidden = before if hidden is None else (hidden | before)
            for h in range(p["heads"]):
                kv = h // g
                sc = (q[b, h].float() @ k[b, kv, :L].float().T) * scale
                if softcap(p) > 0:
                    sc = softcap(p) * t.tanh(sc / softcap(p))
                if hidden is not None:
                    sc.masked_fill_(hidden, float("-inf"))
                if sinks is not None:  # the head's sink logit as one more column of the softmax, dropped after
                    sc = t.cat([sc, sinks[h].view(1, 1).expand(sc.shape[0], 1)], dim=1)
                    ref = t.softmax(sc, dim=-1)[:, :-1] @ v[b, kv, :L].float()
                else:
                    ref = t.softmax(sc, dim=-1) @ v[b, kv, :L].float()
                num += float(((out[b, h].float() - ref) ** 2).sum())
                den += float((ref ** 2).sum())
        rel = math.sqrt(num / den) if den > 0 else float("inf")
        tol = TOLERANCE[p["dtype"]]
        return {"reference": "torch-fp32", "rel_l2_err": rel, "tolerance": tol, "nonfinite": nonfinite,
                "passed": bool(rel <= tol and nonfinite == 0)}

    def sample(self, fn):
        t, a = self.torch, self.a
        for _ in range(a.warmup):
            fn()
        t.cuda.synchronize()
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        times, t0 = [], time.perf_counter()
        total = total_sq = 0.0  # running sums: the noise check costs O(1) per sample
        while True:
            if not a.hot:
                self.flush_buf.zero_()  # evicts L2: the forward reads Q, K, V from HBM
            if self.spin_cycles:
                t.cuda._sleep(self.spin_cycles)
            start.record()
            fn()
            end.record()
            end.synchronize()
            x = start.elapsed_time(end)
            times.append(x)
            total, total_sq = total + x, total_sq + x * x
            n = len(times)
            mean = total / n
            var = max(total_sq - n * mean * mean, 0.0) / (n - 1) if n > 1 else 0.0
            if n >= a.min_samples and mean > 0 and math.sqrt(var) / mean <= a.max_noise:
                return times, "noise"
            if n >= a.max_samples:
                return times, "max_samples"
            if n >= a.min_samples and time.perf_counter() - t0 > a.max_time:
                return times, "max_time"

    def launches(self, fn):
        """Kernels one forward launches, counted with torch.profiler (None when the profiler fails)."""
        t = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the profiler's notes about event cycles
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    fn()
                    t.cuda.synchronize()
            counts = {}
            for e in prof.events():
                if str(getattr(e, "device_type", "")).endswith("CUDA") and not e.name.startswith(("Memcpy", "Memset")):
                    counts[e.name] = counts.get(e.name, 0) + 1
            if not counts:
                return None
            names = [f"{n[:80]} x{c}" for n, c in sorted(counts.items(), key=lambda kv: -kv[1])]
            return {"kernels": sum(counts.values()), "kernel_names": names, "source": "torch.profiler"}
        except Exception as e:  # profiler missing or CUPTI busy: the row still has its time
            self.warnings.append(f"peer_torch: kernel count unavailable ({type(e).__name__}: {e})")
            return None


class Unsupported(Exception):
    pass


# ---- main --------------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--batch", "-b", default=None, help="value, list or range (default 32)")
    ap.add_argument("--heads", default=None, help="default 12")
    ap.add_argument("--kv_heads", "--kv-heads", dest="kv_heads", default=None,
                    help="KV heads (GQA; 1 is MQA; default heads), run through enable_gqa")
    ap.add_argument("--q_len", "--q-len", dest="q_len", default=None,
                    help="queries per sequence (decode 1; default seq_len); causal is bottom-right")
    ap.add_argument("--kv_lens", "--kv-lens", dest="kv_lens", default=None,
                    help="ragged KV lengths: list:..., uniform:LO:HI[:SEED] or file:PATH (as attnbench)")
    ap.add_argument("--seq_len", "--seq-len", "-s", dest="seq_len", default=None, help="default 512")
    ap.add_argument("--head_dim", "--head-dim", "-d", dest="head_dim", default=None, help="default 64")
    ap.add_argument("--dtype", default=None, help="fp16 | bf16 | fp16,bf16 (default fp16)")
    ap.add_argument("--window", default=None, help="sliding window (attnbench's --window; an explicit bool mask here)")
    ap.add_argument("--softcap", default=None, help="attnbench's --softcap (no SDPA backend has it: rows unsupported)")
    ap.add_argument("--sinks", nargs="?", const="true", default=None,
                    help="attnbench's --sinks (no SDPA backend has them: rows unsupported)")
    ap.add_argument("--causal", nargs="?", const="true", default=None,
                    help="--causal alone: causal; --causal=false,true: both (default false)")
    ap.add_argument("--config", help="an attnbench suite (configs/NAME.json or a path) instead of the size flags")
    ap.add_argument("--backends", default=",".join(DEFAULT_BACKENDS),
                    help="subset of " + ",".join(BACKENDS) + ", or all (default: all but flex)")
    ap.add_argument("--json", help="write the peer report (attnbench.report/1) here, atomically")
    ap.add_argument("--merge", metavar="REPORT.json",
                    help="append the peer rows to this attnbench report (in place, atomically); without size "
                         "flags the shapes are taken from the report")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--min-samples", "--min_samples", dest="min_samples", type=int, default=50)
    ap.add_argument("--max-samples", "--max_samples", dest="max_samples", type=int, default=100000)
    ap.add_argument("--max-noise", "--max_noise", dest="max_noise", default="2%", help="e.g. 2%% or 0.02")
    ap.add_argument("--max-time", "--max_time", dest="max_time", type=float, default=1.0, help="seconds per row")
    ap.add_argument("--hot", action="store_true", help="no L2 flush between samples")
    ap.add_argument("--verify", action="store_true", help="check each output against an fp32 reference")
    ap.add_argument("--no-launches", dest="launches", action="store_false", help="skip the torch.profiler kernel count")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--dry-run", action="store_true",
                    help="touch no GPU, need no torch: print the planned call of every (problem, backend); with "
                         "--json every row is unsupported 'no CUDA device'")
    ap.add_argument("--ignore-device", "--ignore_device", dest="ignore_device", action="store_true",
                    help="--merge into a report from another device")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    text = a.max_noise.strip()
    try:
        a.max_noise = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"--max-noise: '{text}' is not a percentage or fraction") from None
    a.backends = list(BACKENDS) if a.backends.strip() == "all" else [b.strip() for b in a.backends.split(",") if b.strip()]
    for b in a.backends:
        if b not in BACKENDS:
            raise UsageError(f"--backends: unknown backend '{b}' (choose from {', '.join(BACKENDS)})")
    if a.min_samples < 1 or a.max_samples < a.min_samples or a.warmup < 0 or a.max_time <= 0:
        raise UsageError("need warmup >= 0, 1 <= min-samples <= max-samples, max-time > 0")
    return a


def build_grid(a, merge_doc):
    sized = any(x is not None for x in (a.batch, a.heads, a.kv_heads, a.seq_len, a.q_len, a.kv_lens, a.head_dim,
                                        a.dtype, a.causal, a.window, a.softcap, a.sinks))
    if a.config and sized:
        raise UsageError("--config and size flags are exclusive")
    if a.config:
        return unique(grid_from_config(a.config))
    if merge_doc is not None and not sized:
        problems = unique(grid_from_report(merge_doc))
        if not problems:
            raise UsageError(f"'{a.merge}': no problems to take shapes from")
        return problems
    a.batch, a.heads = a.batch or "32", a.heads or "12"
    if a.kv_lens is None:
        a.seq_len = a.seq_len or "512"
    a.head_dim, a.dtype, a.causal = a.head_dim or "64", a.dtype or "fp16", a.causal or "false"
    return unique(grid_from_flags(a))


def main(argv):
    a = parse_args(argv)
    merge_doc = read_report(a.merge) if a.merge else None
    problems = build_grid(a, merge_doc)
    work = ask_work(problems)  # FLOPs and bytes of every problem, from the binary (never re-derived here)
    report = {"schema": SCHEMA, "tool": {"name": "peer_torch", "version": "unknown", "git": ""},
              "command": " ".join(shlex.quote(x) for x in [sys.argv[0]] + argv), "created": now(),
              "device": {"backend": "none", "name": "no CUDA device"}, "settings": settings_of(a),
              "warnings": [], "results": []}
    gpu, why_not = None, ""
    if a.dry_run:
        why_not = "no CUDA device (--dry-run)"
    else:
        try:
            import torch
            report["tool"]["version"] = torch.__version__
            if not torch.cuda.is_available():
                why_not = "no CUDA device"
            else:
                gpu = Gpu(a)
                report["device"] = gpu.device_json()
        except ImportError:
            why_not = "PyTorch is not installed"
    if merge_doc is not None:
        mine, theirs = report["device"].get("name"), merge_doc.get("device", {}).get("name")
        if gpu is None:
            report["device"] = merge_doc.get("device", report["device"])  # rows say why nothing ran
        elif mine != theirs and not a.ignore_device:
            raise UsageError(f"'{a.merge}' was measured on '{theirs}', this is '{mine}' (--ignore-device to merge anyway)")
    if why_not:
        report["warnings"].append(f"peer_torch: nothing timed: {why_not}")
    report["warnings"] += method_notes(problems)
    for i, (p, original) in enumerate(problems):
        for backend in a.backends:
            planned = plan(p, backend, original)
            if "skip" in planned:
                continue
            if a.dry_run and not a.quiet:
                notes = f"  # {'; '.join(planned['notes'])}" if planned["notes"] else ""
                print(f"[{i + 1}/{len(problems)}] {label(p)}  peer:torch-{backend}: {planned['call']}{notes}")
            if variant_refusal(p, backend):
                row = unsupported_row(p, backend, variant_refusal(p, backend))
            elif gpu is None:
                row = unsupported_row(p, backend, why_not)
            else:
                row = gpu.run_row(backend, p, planned, work[problem_key(p)])
            report["results"].append(row)
            if not a.quiet and gpu is not None:
                t = row.get("time_ms", {}).get("median")
                shown = f"{t:.4f} ms  {row['gbps']:.0f} GB/s" if t else f"{row['status']}: {row['reason']}"
                print(f"[{i + 1}/{len(problems)}] {label(p)}  {row['strategy']:<24} {shown}", file=sys.stderr)
    # The table, after a timed run, or whenever it is the only output (no --json, no --merge).
    if not a.quiet and not a.dry_run and (gpu is not None or not (a.json or a.merge)):
        print_table(report["results"])
    if gpu is not None:
        report["warnings"] += gpu.warnings
    if a.json:
        write_json_atomic(a.json, report)
    if merge_doc is not None:
        write_json_atomic(a.merge, merge_into(merge_doc, report))
    bad = sum(r["status"] in ("failed", "incorrect") for r in report["results"])
    return 1 if bad else 0


def method_notes(problems):
    """The report's lines on how peers ran the problems PyTorch has no direct form for."""
    notes = []
    if any(o.get("kv_layout") == "paged" for _, o in problems):
        notes.append("peer_torch: paged problems run with contiguous K/V (PyTorch SDPA has no paged KV)")
    if any(ragged(p) for p, _ in problems):
        notes.append("peer_torch: ragged batches are padded to the longest sequence with a key-padding mask "
                     "(rates count the real lengths)")
    if any(p["causal"] and p["q_len"] != p["seq_len"] for p, _ in problems):
        notes.append("peer_torch: causal with q_len != seq_len uses an explicit boolean bottom-right mask "
                     "(PyTorch's is_causal is top-left aligned there)")
    if any(p["kv_heads"] != p["heads"] for p, _ in problems):
        notes.append("peer_torch: GQA/MQA through enable_gqa=True (SDPA), K/V repeat_interleave (unfused), "
                     "packed query heads (gqa-packed, decode only)")
    return notes


def label(p):
    kvh = f" KVH={p['kv_heads']}" if p.get("kv_heads", p["heads"]) != p["heads"] else ""
    q = f" q={p['q_len']}" if p.get("q_len", p["seq_len"]) != p["seq_len"] else ""
    lens = f" lens={p.get('kv_lens', 'list')}" if "kv_lens_values" in p else ""
    variants = "".join(f" {tag}={p[k]}" for k, tag in (("window", "win"), ("softcap", "cap")) if p.get(k))
    variants += " sinks" if p.get("sinks") is True else ""
    return (f"B={p['batch']} H={p['heads']}{kvh} S={p['seq_len']}{q} D={p['head_dim']} {p['dtype']}{lens}"
            + (" causal" if p["causal"] else "") + variants)


def print_table(rows):
    """The rows as a readable table on stdout: problem, strategy, time, rates, or the refusal."""
    lines = [("problem", "strategy", "median ms", "TFLOP/s", "GB/s", "status / notes")]
    last = None
    for r in rows:
        p = r["problem"]
        shown = label(p) if label(p) != last else ""
        last = label(p)
        t = r.get("time_ms", {}).get("median")
        if t:
            notes = r.get("config", {}).get("notes", "")
            lines.append((shown, r["strategy"], f"{t:.4f}", f"{r['tflops']:.1f}", f"{r['gbps']:.0f}", notes))
        else:
            lines.append((shown, r["strategy"], "-", "-", "-", f"{r['status']}: {r['reason']}"))
    widths = [max(len(x[c]) for x in lines) for c in range(5)]
    for x in lines:
        print("  ".join(x[c].ljust(widths[c]) if c < 2 else x[c].rjust(widths[c]) for c in range(5)) + "  " + x[5])


def cli():
    """The `attnbench-peer` console command (and scripts/peer_torch.py)."""
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"peer_torch: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    cli()
