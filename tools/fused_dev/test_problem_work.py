#!/usr/bin/env python3
"""Test of problem_work.py: the peer scripts' FLOPs and bytes are the binary's (`attnbench grid`), causal
counting S(S+1)/2 pairs per head (Problem::pairs) where peer_sdpa.py once divided S*S by 2.
  test_problem_work.py ATTNBENCH"""
import os
import sys

os.environ["ATTNBENCH"] = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problem_work import work  # noqa: E402

B, H, S, D = 32, 12, 512, 64
checks = {
    "full FLOPs": (work(B, H, S, D, False)[0], 4 * B * H * S * S * D),
    "causal FLOPs": (work(B, H, S, D, True)[0], 4 * B * H * D * S * (S + 1) / 2),
    "bf16 causal FLOPs": (work(B, H, S, D, True, "bf16")[0], 4 * B * H * D * S * (S + 1) / 2),
    "bytes (Q, K, V, O)": (work(B, H, S, D, True)[1], 4 * B * H * S * D * 2),
}
failed = [f"{name}: {got} != {want}" for name, (got, want) in checks.items() if got != want]
print("\n".join(failed) or "ok: problem_work.py gives the binary's FLOPs and bytes")
sys.exit(1 if failed else 0)
