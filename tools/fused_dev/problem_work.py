"""FLOPs and bytes of the harness's contiguous shapes as the attnbench binary counts them (`attnbench grid
--json=-`: Problem::flops and Problem::bytes, src/core/problem.cpp; causal counts S(S+1)/2 query-key pairs per
head), so that peer_sdpa.py's and peer_interleaved.py's TFLOP/s divide the same work as fused_dev bench and every
attnbench row. The binary is $ATTNBENCH (scripts/fused-dev.sh sets it), else python/attnbench's find_binary."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from attnbench.rows import RowsError, ask_grid, find_binary  # noqa: E402,F401  (RowsError: what work raises)

_asked = {}  # (B, H, S, D) -> {(causal, dtype): (flops, bytes)}


def work(batch, heads, seq_len, head_dim, causal, dtype="fp16"):
    """(flops, bytes) of one contiguous problem; one binary call per (B, H, S, D). Raises RowsError when the
    binary cannot be found or refuses the shape."""
    key = (batch, heads, seq_len, head_dim)
    if key not in _asked:
        grid = ask_grid(find_binary(), [f"--batch={batch}", f"--heads={heads}", f"--seq_len={seq_len}",
                                        f"--head_dim={head_dim}", "--causal=false,true", "--dtype=fp16,bf16"])
        _asked[key] = {(p["causal"], p["dtype"]): (float(p["flops"]), float(p["bytes"])) for p in grid}
    return _asked[key][(bool(causal), dtype)]
