"""Oversized shapes through the real binary (issue 16, finding 1 and 7): sizes whose products pass 2^63 are
refused with one line and exit 2 by run and tune, range parsing refuses overflow, tune estimates memory
before allocating, and the CPU estimate counts host copies and the fp64 reference."""
import os

from cli_helpers import expect_exit, run

HUGE = ["--batch=1048576", "--heads=1048576", "--seq_len=262144", "--head_dim=64"]


def test_huge_shape_refused_by_run_and_tune(attnbench, work):
    expect_exit(2, "1.845e+19 elements (32.00 EiB in fp16)", attnbench, "--backend=cpu", *HUGE)
    expect_exit(2, "1.845e+19 elements", attnbench, *HUGE)
    expect_exit(2, "1.845e+19 elements", attnbench, "tune", "--backend=cpu", *HUGE, "--cache=c.json")
    expect_exit(2, "1.845e+19 elements", attnbench, "tune", *HUGE, "--cache=c.json")
    assert not os.path.exists("c.json"), "a refused tune left c.json"


def test_range_overflow(attnbench, work):
    # A range whose next value would pass 2^63: the range ends at its last value, the shape is then refused.
    expect_exit(2, "B=1099511627776", attnbench, "--backend=cpu", "--batch=1099511627776:1099511627776:*16777216")
    expect_exit(2, "B=1099511627776", attnbench, "--backend=cpu", "--batch=1:1099511627776:*1099511627776",
                "--heads=1048576")
    expect_exit(2, "is too large", attnbench, "--backend=cpu", "--batch=99999999999999999999")


def test_point_count_refused_not_wrapped(attnbench, work):
    # Eight axes of many values: the point count is refused, not wrapped.
    many = ",".join(str(i) for i in range(1, 201))
    expect_exit(2, "the limit is 100000", attnbench, "--backend=cpu", f"--batch={many}", f"--heads={many}",
                f"--seq_len={many}", f"--head_dim={many}")


def test_memory_estimated_before_allocating(attnbench, work):
    # tune estimates memory before allocating, as run does (was std::bad_alloc mid-tune).
    big = ["--batch=1024", "--heads=64", "--seq_len=8192", "--head_dim=128", "--strategies=fused"]
    expect_exit(2, "refused before allocating", attnbench, "tune", "--backend=cpu", *big, "--cache=c.json")
    # The exact commands, with the backend chosen as a user would (auto): still one line, no notice first.
    expect_exit(2, "refused before allocating", attnbench, "tune", *big, "--cache=c.json")
    expect_exit(2, "refused before allocating", attnbench, *big)
    expect_exit(2, "refused before allocating", attnbench, "tune", "--backend=cpu", "--quiet", "--batch=1", "--heads=1",
                "--seq_len=4096", "--head_dim=64", "--max_memory=1MiB", "--cache=c.json")
    assert not os.path.exists("c.json"), "a refused tune left c.json"


def test_cpu_estimate_counts_host_copies_and_reference(attnbench, work):
    # The CPU estimate counts the host copies and the fp64 reference: B=64 H=1 S=256 D=64 is E=2^20 elements;
    # its buffers alone take 12 MiB (2+2+2+2 bytes per element and the fp32 reference), 26 MiB with the host
    # copies (6 per element) and the fp64 reference (8): 20 MiB is refused with --verify, enough without.
    shape = ["--batch=64", "--heads=1", "--seq_len=256", "--head_dim=64", "--strategies=fused"]
    expect_exit(2, "refused before allocating", attnbench, "--backend=cpu", "--quiet", "--verify", *shape,
                "--max_memory=20MiB")
    r = run(attnbench, "--backend=cpu", "--quiet", *shape, "--max_memory=20MiB", "--max_samples=1", "--warmup=0")
    assert r.returncode == 0, f"without --verify 20MiB should hold E=2^20 (rc={r.returncode}): {r.stderr[-2000:]}"
