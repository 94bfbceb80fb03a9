#!/usr/bin/env python3
"""Tests of libattnbench_fused_capi.so (fused_capi.cpp) and peer_interleaved.py, which loads it.

  test_fused_capi.py LIB          refusals, no GPU needed: bad sizes and an unknown tile get rc 2 and one line
                                  saying why; peer_interleaved.py's bad arguments exit 2 with one line
  test_fused_capi.py LIB --gpu    peer_interleaved.py on a small awkward row (S=301, D=128 and 64, fp16 and bf16,
                                  causal and not) against cuDNN: fused's output checked against fp32 math, then
                                  timed interleaved; exit 77 (skipped) without torch or a CUDA device
"""
import ctypes
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "peer_interleaved.py")


def run_refusals(lib_path):
    lib = ctypes.CDLL(lib_path)
    fn = lib.attnbench_fused_run
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_longlong] * 4 + [ctypes.c_int] * 2 + [
        ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    err, used = ctypes.create_string_buffer(256), ctypes.create_string_buffer(64)

    def call(b, h, s, d, tile):
        err.value, used.value = b"", b""
        return fn(None, None, None, None, b, h, s, d, 0, 0, tile, None, err, 256, used, 64), err.value.decode()

    failures = []
    rc, msg = call(0, 4, 128, 64, b"")
    if rc != 2 or "batch must be a positive integer" not in msg:
        failures.append(f"batch=0: rc {rc}, '{msg}'")
    rc, msg = call(1, 1, -5, 128, b"")
    if rc != 2 or "seq_len must be a positive integer" not in msg:
        failures.append(f"seq_len=-5: rc {rc}, '{msg}'")
    rc, msg = call(1, 1, 77, 128, b"m1n1w1s1")
    if rc != 2 or msg != "tile m1n1w1s1 is not compiled":
        failures.append(f"unknown tile: rc {rc}, '{msg}'")
    # A message longer than the caller's buffer is cut, not overrun.
    small = ctypes.create_string_buffer(b"\x7f" * 16, 16)
    rc = fn(None, None, None, None, 0, 1, 1, 64, 0, 0, b"", None, small, 8, used, 64)
    if rc != 2 or small.raw[7:8] != b"\x00" or small.raw[8:] != b"\x7f" * 8:
        failures.append(f"short error buffer: rc {rc}, {small.raw!r}")
    for args, want in ((["--rows", "1,2"], "--rows"), (["--dtypes", "fp8"], "--dtypes"),
                       (["--backends", "math"], "--backends"), (["--rounds", "0"], "--rounds")):
        p = subprocess.run([sys.executable, SCRIPT, "--lib", lib_path] + args, capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            failures.append(f"peer_interleaved.py {' '.join(args)}: rc {p.returncode}, stderr {p.stderr!r}")
    return failures


def run_gpu(lib_path):
    try:
        import torch
    except ImportError:
        print("SKIPPED: no torch")
        return 77
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 77
    p = subprocess.run([sys.executable, SCRIPT, "--lib", lib_path, "--rows", "2,3,301,128,5;1,1,301,64,5",
                        "--backends", "cudnn"], capture_output=True, text=True)
    print(p.stdout + p.stderr)
    rows = [l for l in p.stdout.splitlines() if l.startswith("B=") and " fused " in l]
    if p.returncode != 0 or len(rows) != 8:
        print(f"FAILED: rc {p.returncode}, {len(rows)} fused rows (want 8)")
        return 1
    return 0


def main():
    if len(sys.argv) < 2:
        print("usage: test_fused_capi.py LIB [--gpu]", file=sys.stderr)
        return 2
    if "--gpu" in sys.argv[2:]:
        return run_gpu(sys.argv[1])
    failures = run_refusals(sys.argv[1])
    for f in failures:
        print("FAILED:", f)
    print(f"{4 + 4 - len(failures)} of 8 checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
