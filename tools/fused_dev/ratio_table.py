#!/usr/bin/env python3
"""Prints the fused/peer table from the CSV rows that fused_dev bench and peer_sdpa.py appended.
Row: kind,name,B,H,S,D,causal,layout,median_ms,p10_ms,p90_ms,tflops,device"""
import sys
from collections import defaultdict

rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
fused = defaultdict(list)
peers = defaultdict(dict)
device = rows[0][12] if rows else "?"
for r in rows:
    key = tuple(int(x) for x in r[2:7])
    if r[7] != "contiguous":
        continue
    if r[0] == "fused" and "(again)" not in r[1]:
        fused[key].append((float(r[8]), r[1], float(r[11])))
    elif r[0] == "peer":
        peers[key][r[1]] = (float(r[8]), float(r[11]))
print(f"\nfused vs PyTorch SDPA, fp16, one run on {device} (median ms, L2 flushed before every sample)")
print(f"ratio = fused time / peer time (< 1: fused faster)")
hdr = f"{'shape':36s} {'best tile':12s} {'fused ms':>9s} {'TFLOP/s':>8s}"
for p in ("torch-flash", "torch-cudnn", "torch-efficient"):
    hdr += f" {p[6:] + ' ms':>13s} {'ratio':>6s}"
print(hdr)
for key in sorted(fused):
    B, H, S, D, c = key
    best = min(fused[key])
    line = f"{f'B={B} H={H} S={S} D={D}' + (' causal' if c else ''):36s} {best[1]:12s} {best[0]:9.4f} {best[2]:8.1f}"
    for p in ("torch-flash", "torch-cudnn", "torch-efficient"):
        if p in peers[key]:
            line += f" {peers[key][p][0]:13.4f} {best[0] / peers[key][p][0]:6.3f}"
        else:
            line += f" {'-':>13s} {'-':>6s}"
    print(line)
print("\nper tile (fused ms / flash ms):")
for key in sorted(fused):
    fl = peers[key].get("torch-flash", (float("nan"),))[0]
    print(f"  {str(key):28s} " + "  ".join(f"{n}={t:.4f}({t / fl:.2f})" for (t, n, _) in sorted(fused[key], key=lambda x: x[1])))
