#!/usr/bin/env python3
"""PyTorch SDPA peers for the fused-kernel dev harness: flash, cuDNN, memory-efficient and the unfused
math backend, timed the way fused_dev times the fused kernel (L2 flushed by a 512 MB memset before every
sample, CUDA events around one call, median of many). Appends CSV rows to argv[1]; also measures the two
ceilings (device-to-device copy bandwidth, 8192^3 fp16/bf16 matrix product rate) on random data. TFLOP/s divide
the FLOPs the attnbench binary counts (problem_work.py; $ATTNBENCH names the binary)."""
import sys, statistics, time
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

from problem_work import RowsError, work

csv_path = sys.argv[1] if len(sys.argv) > 1 else None
shapes = [(32, 12, 512, 64, 200), (8, 16, 2048, 128, 100), (2, 16, 8192, 128, 40)]
try:  # asked before any timing: a missing binary stops the script at once
    flops_of = {(B, H, S, D, c): work(B, H, S, D, c)[0] for (B, H, S, D, _) in shapes for c in (False, True)}
except RowsError as e:
    sys.exit(f"peer_sdpa.py: {e}")
dev = torch.device("cuda")
name = torch.cuda.get_device_name(0)
print(f"torch {torch.__version__} on {name}", flush=True)
flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)


def time_it(fn, samples, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(samples):
        flush.fill_(i & 0xFF)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    ms.sort()
    q = lambda f: ms[int(f * (len(ms) - 1))]
    return q(0.5), q(0.1), q(0.9)


rows = []
# Ceilings.
x = torch.randn(1 << 30, dtype=torch.float16, device=dev)  # 2 GB
y = torch.empty_like(x)
med, _, _ = time_it(lambda: y.copy_(x), 20, 3)
bw = 2 * x.numel() * 2 / (med * 1e-3) / 1e12
print(f"ceiling: device-to-device copy {bw:.2f} TB/s (read+write, 2 GB, median of 20)", flush=True)
del x, y
for dt in (torch.float16, torch.bfloat16):
    a_ = torch.randn(8192, 8192, dtype=dt, device=dev)
    b_ = torch.randn(8192, 8192, dtype=dt, device=dev)
    med, _, _ = time_it(lambda: a_ @ b_, 20, 5)
    print(f"ceiling: 8192^3 {str(dt)[6:]} matmul {2 * 8192**3 / (med * 1e-3) / 1e12:.0f} TFLOP/s (median of 20)", flush=True)
    del a_, b_
torch.cuda.empty_cache()

backends = [("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION),
            ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION), ("torch-math", SDPBackend.MATH)]
print(f"{'shape':42s} {'peer':16s} {'median_ms':>9s} {'p10_ms':>9s} {'p90_ms':>9s} {'TFLOP/s':>8s}", flush=True)
for (B, H, S, D, samples) in shapes:
    for causal in (False, True):
        g = torch.Generator(device=dev).manual_seed(5)
        q = torch.randn(B, H, S, D, dtype=torch.float16, device=dev, generator=g)
        k = torch.randn(B, H, S, D, dtype=torch.float16, device=dev, generator=g)
        v = torch.randn(B, H, S, D, dtype=torch.float16, device=dev, generator=g)
        flops = flops_of[(B, H, S, D, causal)]
        label = f"B={B} H={H} S={S} D={D} contiguous fp16" + (" causal" if causal else "")
        for (pname, be) in backends:
            n = samples if pname != "torch-math" else max(5, samples // 10)
            try:
                with sdpa_kernel(be):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    med, p10, p90 = time_it(fn, n)
            except Exception as e:  # a backend that cannot run the shape
                print(f"{label:42s} {pname:16s} unsupported: {str(e).splitlines()[0][:80]}", flush=True)
                torch.cuda.empty_cache()
                continue
            tf = flops / (med * 1e-3) / 1e12
            print(f"{label:42s} {pname:16s} {med:9.4f} {p10:9.4f} {p90:9.4f} {tf:8.1f}", flush=True)
            rows.append(f"peer,{pname},{B},{H},{S},{D},{int(causal)},contiguous,{med:.5f},{p10:.5f},{p90:.5f},{tf:.2f},{name}")
            torch.cuda.empty_cache()
if csv_path:
    with open(csv_path, "a") as f:
        f.write("\n".join(rows) + "\n")
