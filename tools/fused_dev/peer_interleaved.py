#!/usr/bin/env python3
"""fused against PyTorch's cuDNN and flash SDPA backends in one process, their samples interleaved.

An H200 runs up to 10 % slower a few seconds into steady work (its power limit), so a series timed right
after another one reads slower than the same kernel timed first (session 32: a tile timed twice in
fused_dev bench, 0.433 then 0.475 ms). Here sample i of every backend is taken before sample i + 1 of any,
the order rotating from sample to sample, each sample one call between two CUDA events after a 512 MB fill
(the L2 flush fused_dev and peer_sdpa.py use). The fused kernel comes from libattnbench_fused_capi.so
(built with the CUDA backend unless -DATTNBENCH_FUSED_CAPI=OFF; tools/fused_dev/fused_capi.cpp), called through ctypes on
PyTorch's stream. Before timing, each backend's output is checked against fp32 math on two heads.

  peer_interleaved.py --lib build/libattnbench_fused_capi.so [--rows issue20] [--dtypes fp16,bf16]
                      [--backends cudnn,flash] [--tile NAME] [--json out.json]

Prints per row and dtype each backend's median, p10 and TFLOP/s (the FLOPs the attnbench binary counts:
problem_work.py, $ATTNBENCH), the ratio of fused's median to each peer's and the median of the per-sample
ratios. Exit 2 on bad arguments, a refused tile or no binary, 1 when an output is off.
"""
import argparse
import ctypes
import json
import math
import statistics
import sys

from problem_work import RowsError, work

ISSUE20_ROWS = [(32, 12, 512, 64, 200), (8, 16, 2048, 128, 100), (2, 16, 8192, 128, 40)]
TOLERANCE = {"fp16": 2e-3, "bf16": 1e-2}  # relative L2 against fp32 math (fused_dev check's)


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="path of libattnbench_fused_capi.so")
    ap.add_argument("--rows", default="issue20",
                    help="issue20, or B,H,S,D[,samples] rows separated by ';' (each causal and not)")
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--backends", default="cudnn,flash")
    ap.add_argument("--tile", default="", help="a fused tile name (default: the default tile)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat every row this many times")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    try:
        if a.rows == "issue20":
            a.rows = ISSUE20_ROWS
        else:
            rows = []
            for r in a.rows.split(";"):
                v = [int(x) for x in r.split(",")]
                if len(v) not in (4, 5) or min(v) < 1:
                    raise ValueError(r)
                rows.append(tuple(v) if len(v) == 5 else tuple(v) + (50,))
            a.rows = rows
    except ValueError:
        die("--rows: B,H,S,D[,samples] positive integers separated by ';', or issue20")
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    a.backends = [b for b in a.backends.split(",") if b]
    if not a.dtypes or any(d not in TOLERANCE for d in a.dtypes):
        die("--dtypes: fp16 and/or bf16")
    if any(b not in ("cudnn", "flash") for b in a.backends):
        die("--backends: cudnn and/or flash")
    if a.rounds < 1:
        die("--rounds must be at least 1")
    return a


class Fused:
    """attnbench_fused_run through ctypes."""

    def __init__(self, path, tile):
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as e:
            die(f"cannot load {path}: {e}")
        f = self.lib.attnbench_fused_run
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_longlong] * 4 + [ctypes.c_int] * 2 + [
            ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.fn = f
        self.tile = tile.encode()
        self.err = ctypes.create_string_buffer(512)
        self.used = ctypes.create_string_buffer(64)

    def __call__(self, q, k, v, o, causal, bf16, stream):
        B, H, S, D = q.shape
        rc = self.fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), B, H, S, D, int(causal), int(bf16),
                     self.tile, stream, self.err, 512, self.used, 64)
        if rc != 0:
            raise RuntimeError(self.err.value.decode())
        return self.used.value.decode()


def time_interleaved(torch, fns, samples, flush):
    """Warm-up, then per sample one call of every function in a rotating order, each after the L2 fill,
    between two CUDA events. {name: [ms, ...]}."""
    names = list(fns)
    for name in names:
        for _ in range(10):
            fns[name]()
    torch.cuda.synchronize()
    ms = {n: [] for n in names}
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    for i in range(samples):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            flush.fill_(i & 0xFF)
            ev[0].record()
            fns[name]()
            ev[1].record()
            ev[1].synchronize()
            ms[name].append(ev[0].elapsed_time(ev[1]))
    return ms


def run_case(torch, F, sdpa_kernel, ctx, rnd, B, H, S, D, samples, dname, causal):
    """One row, dtype and mask: outputs checked, then timed. (JSON row, number of outputs off)."""
    fused, flush, peer_backend, backends, device_name = ctx
    dev = torch.device("cuda")
    dt = torch.float16 if dname == "fp16" else torch.bfloat16
    bf16 = dname == "bf16"
    label = f"B={B} H={H} S={S} D={D} {dname}" + (" causal" if causal else "")
    g = torch.Generator(device=dev).manual_seed(1000 * rnd + S + D)
    q, k, v = (torch.randn(B, H, S, D, dtype=dt, device=dev, generator=g) for _ in range(3))
    o = torch.full_like(q, float("nan"))  # poisoned before fused's first run, the one checked below
    stream = torch.cuda.current_stream().cuda_stream
    try:
        tile = fused(q, k, v, o, causal, bf16, stream)
    except RuntimeError as e:
        die(f"{label}: fused refused: {e}")
    fns = {f"fused:{tile}": lambda: fused(q, k, v, o, causal, bf16, stream)}
    outs = {"fused": o.clone()}
    for name in backends:
        def peer(be=peer_backend[name]):
            with sdpa_kernel(be):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        try:
            outs[name] = peer()
            fns[name] = peer
        except RuntimeError as e:
            print(f"{label:40s} {name:10s} unsupported: {str(e).splitlines()[0][:80]}", flush=True)
    # Correctness first: every output against fp32 math on two heads.
    ref = F.scaled_dot_product_attention(q[:1, :2].float(), k[:1, :2].float(), v[:1, :2].float(), is_causal=causal)
    errs, bad = {}, 0
    for name, out in outs.items():
        errs[name] = float(torch.linalg.vector_norm(out[:1, :2].float() - ref) / torch.linalg.vector_norm(ref))
        if not math.isfinite(errs[name]) or errs[name] > TOLERANCE[dname]:
            print(f"{label}: {name} output off: rel_l2 {errs[name]:.3e} (tol {TOLERANCE[dname]})", file=sys.stderr)
            bad += 1
    del outs, ref
    ms = time_interleaved(torch, fns, samples, flush)
    flops = work(B, H, S, D, causal, dname)[0]
    fname = next(iter(ms))
    fmed = statistics.median(ms[fname])
    row = {"round": rnd, "batch": B, "heads": H, "seq_len": S, "head_dim": D, "dtype": dname, "causal": causal,
           "samples": samples, "device": device_name, "rel_l2": errs, "backends": {}}
    for name, xs in ms.items():
        srt = sorted(xs)
        med, p10 = statistics.median(srt), srt[int(0.1 * (len(srt) - 1))]
        paired = statistics.median(f / x for f, x in zip(ms[fname], xs))
        row["backends"][name] = {"median_ms": med, "p10_ms": p10, "tflops": flops / med * 1e-9,
                                 "fused_ratio": fmed / med, "paired_ratio": paired, "ms": xs}
        print(f"{label:40s} {name.split(':')[0]:10s} {med:9.4f} {p10:9.4f} {flops / med * 1e-9:8.1f} "
              f"{fmed / med:8.3f} {paired:7.3f}", flush=True)
    del q, k, v, o, fns
    torch.cuda.empty_cache()
    return row, bad


def main():
    a = parse_args()
    try:  # asked before torch loads: a missing binary stops the script at once
        for (B, H, S, D, _) in a.rows:
            work(B, H, S, D, False)
    except RowsError as e:
        die(f"peer_interleaved.py: {e}")
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel, SDPBackend

    device_name = torch.cuda.get_device_name(0)
    print(f"torch {torch.__version__} on {device_name}", flush=True)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device=torch.device("cuda"))
    peer_backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    ctx = (Fused(a.lib, a.tile), flush, peer_backend, a.backends, device_name)
    results, bad = [], 0
    print(f"{'row':40s} {'backend':10s} {'median_ms':>9s} {'p10_ms':>9s} {'TFLOP/s':>8s} {'fused/it':>8s} {'paired':>7s}")
    for rnd in range(a.rounds):
        for (B, H, S, D, samples) in a.rows:
            for dname in a.dtypes:
                for causal in (False, True):
                    row, off = run_case(torch, F, sdpa_kernel, ctx, rnd, B, H, S, D, samples, dname, causal)
                    results.append(row)
                    bad += off
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": device_name, "torch": torch.__version__, "rows": results}, f)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
