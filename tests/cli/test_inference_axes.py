"""The inference axes (kv_heads, q_len, kv_lens) through the real binary: every bad value is one line on stderr,
exit code 2 and no report file; good ragged specs expand the same way twice and show their lengths; a run
reports the measured copy bandwidth and each row's %copy; the model suites expand; peer_torch.py --dry-run
plans the inference calls without torch.

Unlike the other CLI tests this one measures the host's copy bandwidth: ATTNBENCH_HOST_COPY_GBPS is removed
from the environment (CTest does not set it for this test either)."""
import glob
import json
import os
import re
import sys

import pytest

from cli_helpers import expect_exit, run

SMALL = ["--batch=1", "--heads=4", "--seq_len=16", "--head_dim=8", "--max_time=0.02", "--min_samples=2"]


def pytest_generate_tests(metafunc):
    if "suite_file" in metafunc.fixturenames:
        root = metafunc.config.getoption("--source-dir")
        files = sorted(glob.glob(os.path.join(root, "configs", "*.json")))
        metafunc.parametrize("suite_file", files, ids=[os.path.basename(f) for f in files])


@pytest.fixture(scope="module", autouse=True)
def measured_copy_bandwidth():
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ATTNBENCH_HOST_COPY_GBPS", raising=False)
        yield


def load(path):
    with open(path) as f:
        return json.load(f)


REFUSED = [
    ("kv_heads", [*SMALL, "--heads=32", "--kv_heads=5"]),
    ("kv_heads", [*SMALL, "--kv_heads=0"]),
    ("q_len", [*SMALL, "--q_len=0"]),
    ("q_len", [*SMALL, "--q_len=17"]),
    ("kv_lens", ["--batch=4", "--heads=2", "--head_dim=8", "--kv_lens=list:1,2,3"]),
    ("kv_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=list:5,0"]),
    ("kv_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=uniform:9:3"]),
    ("kv_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=uniform:a:3"]),
    ("kv_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=file:/nonexistent/lengths.txt"]),
    ("kv_lens", ["--batch=3", "--heads=2", "--head_dim=8", "--kv_lens=file:bad_lengths.txt"]),
    ("seq_len", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=list:7,9", "--seq_len=64"]),
    # A mixed batch's query counts: one per sequence, each at most its KV length, q_len (if given) their most.
    ("q_lens", ["--batch=3", "--heads=2", "--head_dim=8", "--seq_len=16", "--q_lens=list:1,2"]),
    ("q_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--kv_lens=list:7,9", "--q_lens=list:8,1"]),
    ("q_lens", ["--batch=2", "--heads=2", "--head_dim=8", "--seq_len=16", "--q_lens=list:0,1"]),
    ("q_len", ["--batch=2", "--heads=2", "--head_dim=8", "--seq_len=16", "--q_lens=list:3,1", "--q_len=2"]),
    # The same through a suite: kv_heads that do not divide heads.
    ("kv_heads", ["--config=bad_suite.json"]),
    # An FP8 K/V cache (issue 46): an unknown format or granularity, per-head scales without FP8, and a run of it
    # (no strategy runs it yet: the grid is refused as a whole, with the variant named).
    ("kv_dtype", [*SMALL, "--kv_dtype=int4"]),
    ("kv_scale", [*SMALL, "--kv_dtype=fp8_e4m3", "--kv_scale=row"]),
    ("kv_scale", [*SMALL, "--kv_scale=head"]),
    ("FP8 K/V cache", [*SMALL, "--kv_dtype=fp8_e4m3", "--kv_scale=head"]),
]


@pytest.mark.parametrize("needle,args", REFUSED, ids=[" ".join(a[-2:]) for _, a in REFUSED])
def test_bad_value_refused_without_report(attnbench, work, needle, args):
    # `run` exits 2 with one stderr line containing the needle and writes no report.
    with open("bad_lengths.txt", "w") as f:
        f.write("12\n# a comment\nseven\n40\n")
    with open("bad_suite.json", "w") as f:
        f.write('{"name": "bad-gqa", "description": "kv_heads 5 of 32", "grids": [{"batch": 1, "heads": 32, '
                '"kv_heads": 5, "seq_len": 64, "head_dim": 64}]}\n')
    expect_exit(2, needle, attnbench, "--backend=cpu", "--quiet", "--json=out.json", *args)
    assert not os.path.exists("out.json"), f"out.json written for: {args}"
    assert not glob.glob("out.json.tmp.*"), f"temporary report left for: {args}"


def test_grid_refuses_kv_heads(attnbench, work):
    expect_exit(2, "kv_heads", attnbench, "grid", "--heads=32", "--kv_heads=5")


@pytest.fixture(scope="module")
def uniform_lens(attnbench):
    """Good input: a seeded uniform spec shows its lengths; the fields of two invocations."""
    def grid_lens():
        r = run(attnbench, "grid", "--batch=4", "--heads=8", "--kv_heads=2", "--head_dim=64", "--q_len=1",
                "--kv_lens=uniform:512:8192:7", "--json=-")
        assert r.returncode == 0, f"grid --kv_lens=uniform:512:8192:7: {r.stderr}"
        p = json.loads(r.stdout)
        assert len(p) == 1, p
        return p[0]["kv_lens"], p[0]["kv_lens_values"], p[0]["seq_len"], p[0]["q_len"], p[0]["kv_heads"]
    return grid_lens(), grid_lens()


def test_uniform_lengths_same_twice(uniform_lens):
    first, second = uniform_lens
    assert first == second, f"uniform lengths differ between invocations: {first} vs {second}"


def test_uniform_lengths_in_bounds(uniform_lens):
    spec, lens, S, q, kvh = uniform_lens[0]
    assert spec == "uniform:512:8192:7" and len(lens) == 4 and all(512 <= x <= 8192 for x in lens) and S == max(lens), \
        f"uniform lengths out of bounds: {uniform_lens[0]}"
    assert q == 1 and kvh == 2


def test_lengths_file_run(attnbench, in_module_work):
    # A lengths file with comments and blank lines works, and the run records the lengths.
    with open("lengths.txt", "w") as f:
        f.write("# lengths from a trace\n\n37\n  \n100\n# done\n64\n")
    r = run(attnbench, "--backend=cpu", "--quiet", "--batch=3", "--heads=4", "--kv_heads=2", "--head_dim=8",
            "--q_len=5", "--causal", "--kv_lens=file:lengths.txt", "--strategies=fused", "--max_time=0.02", "--min_samples=2",
            "--json=lens.json")
    assert r.returncode == 0, f"run with a lengths file: {r.stderr}"


def test_mixed_batch_run(attnbench, in_module_work):
    # A mixed batch (decode rows, draft tokens and a prefill chunk, ragged, paged with short last pages) verified
    # on every strategy; the report records the query counts and counts only their pairs.
    r = run(attnbench, "--backend=cpu", "--quiet", "--batch=4", "--heads=4", "--kv_heads=2", "--head_dim=8",
            "--kv_lens=list:50,9,23,31", "--q_lens=list:1,4,23,1", "--causal", "--page_size=7", "--kv_layout=paged",
            "--verify", "--max_time=0.02", "--min_samples=2", "--json=mixed.json")
    assert r.returncode == 0, f"run of a mixed batch: {r.stderr}"
    rows = load("mixed.json")["results"]
    assert {x["strategy"] for x in rows} == {"nested", "head_batched", "fully_batched", "ptr_array", "fused"}, rows
    assert all(x["status"] == "ok" for x in rows), [(x["strategy"], x["status"], x.get("reason")) for x in rows]
    p = rows[0]["problem"]
    assert p["q_lens_values"] == [1, 4, 23, 1] and p["q_len"] == 23 and p["q_lens"] == "list:1,4,23,1", p
    # Pairs: sequence b's q queries see L - q + 1 + i keys (i < q) causal: 50 + (6+7+8+9) + (1+...+23) + 31.
    pairs = 4 * (50 + 30 + 276 + 31)
    flops = rows[0]["tflops"] * 1e12 * rows[0]["time_ms"]["median"] * 1e-3
    assert flops == pytest.approx(2.0 * pairs * 16, rel=1e-3), (flops, 2.0 * pairs * 16)


def test_lengths_file_report(in_module_work):
    p = load("lens.json")["results"][0]["problem"]
    assert p["kv_lens_values"] == [37, 100, 64], p
    assert p["seq_len"] == 100 and p["q_len"] == 5 and p["kv_heads"] == 2, p


# Achieved bandwidth: the device info has the measured copy bandwidth, every timed row its fraction, and the
# console and markdown tables show %copy.
@pytest.fixture(scope="module")
def decode_run(attnbench, module_work):
    r = run(attnbench, "--backend=cpu", "--batch=2", "--heads=4", "--kv_heads=1", "--seq_len=300", "--q_len=1",
            "--head_dim=32", "--strategies=fused", "--max_time=0.02", "--min_samples=2", "--json=bw.json",
            cwd=module_work)
    return r, r.stdout + r.stderr


def test_decode_run(decode_run):
    r, console = decode_run
    assert r.returncode == 0, f"decode run: {console[-1000:]}"


def test_console_shows_copy_fraction(decode_run):
    assert "%copy" in decode_run[1], "console table lacks %copy"


def test_device_line_shows_copy_bandwidth(decode_run):
    assert re.search(r"copy [0-9]* GB/s", decode_run[1]), "device line lacks the copy bandwidth"


def test_report_has_copy_bandwidth_and_fractions(decode_run, in_module_work):
    d = load("bw.json")
    bw = d["device"]["copy_bandwidth_gbps"]
    assert bw > 0, bw
    for r in d["results"]:
        if r["status"] == "ok":
            assert abs(r["copy_fraction"] - r["gbps"] / bw) < 1e-9 * max(1, r["copy_fraction"]), r


def test_markdown_shows_copy_fraction(attnbench, decode_run, in_module_work):
    r = run(attnbench, "report", "bw.json", "--md=-")
    assert r.returncode == 0 and "| %copy |" in r.stdout + r.stderr, "markdown lacks %copy"


def test_csv_has_copy_fraction(attnbench, decode_run, in_module_work):
    r = run(attnbench, "report", "bw.json", "--csv=-")
    out = r.stdout + r.stderr
    assert r.returncode == 0 and ",gbps,copy_fraction," in out.split("\n")[0], "csv lacks copy_fraction"


def test_older_report_still_prints(attnbench, decode_run, in_module_work):
    # A report from before the field still reads and prints (no %copy: '-').
    d = load("bw.json")
    del d["device"]["copy_bandwidth_gbps"]
    for r in d["results"]:
        r.pop("copy_fraction", None)
    with open("old.json", "w") as f:
        json.dump(d, f)
    r = run(attnbench, "report", "old.json")
    assert r.returncode == 0 and "%copy" in r.stdout + r.stderr, "an older report does not print"


def test_shipped_suite_expands(attnbench, work, suite_file):
    # Every shipped suite expands through the binary; the model suites carry their GQA head counts.
    r = run(attnbench, "grid", f"--config={suite_file}", "--json=-")
    assert r.returncode == 0, f"grid --config={suite_file}: {r.stderr}"


def test_llama_decode_suite_heads(attnbench, work):
    r = run(attnbench, "grid", "--config=llama3.1-8b-decode", "--json=-")
    p = json.loads(r.stdout)
    assert all(x["heads"] == 32 and x["kv_heads"] == 8 and x["q_len"] == 1 for x in p), "llama3.1-8b-decode"


def test_missing_suite_by_name(attnbench, work):
    expect_exit(2, "paged-decode", attnbench, "grid", "--config=paged-decode")


# peer_torch.py plans the inference calls without torch.
@pytest.fixture(scope="module")
def peer_plan(attnbench, src, module_work):
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--config=qwen2.5-7b-chunked-prefill",
            env={"ATTNBENCH": attnbench}, cwd=module_work)
    return r


def test_peer_dry_run(peer_plan):
    assert peer_plan.returncode == 0, f"peer_torch --dry-run: {peer_plan.stderr}"


@pytest.mark.parametrize("needle", ["enable_gqa=True", "attn_mask=bool", "bottom-right", "key-padding",
                                    "paged KV run contiguous", "SDPBackend.MATH", "SDPBackend.CUDNN_ATTENTION"])
def test_peer_plan_mentions(peer_plan, needle):
    assert needle in peer_plan.stdout, f"peer plan lacks '{needle}'"


def test_peer_dry_run_json(attnbench, src, in_module_work):
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--config=falcon-7b-decode",
            "--json=peer.json", "-q", env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, f"peer dry-run json: {r.stderr}"


def test_peer_dry_run_rows(in_module_work):
    d = load("peer.json")
    names = {r["strategy"] for r in d["results"]}
    assert {"peer:torch-flash", "peer:torch-math", "peer:torch-gqa-packed"} <= names, names
    assert all(r["problem"]["kv_heads"] == 1 and r["problem"]["kv_layout"] == "contiguous" for r in d["results"])
    assert any("contiguous K/V" in w for w in d["warnings"]), d["warnings"]


def test_peer_refuses_an_fp8_kv_cache(attnbench, src, work):
    # PyTorch's rows of an FP8 K/V cache problem keep its format and say why they are not run, instead of timing
    # 16-bit K/V under its name.
    with open("fp8.json", "w") as f:
        json.dump({"name": "fp8-kv", "description": "an FP8 K/V cache", "grids": [
            {"batch": 2, "heads": 8, "kv_heads": 2, "seq_len": 300, "q_len": 1, "head_dim": 64,
             "kv_dtype": "fp8_e4m3", "kv_scale": "head"}]}, f)
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--config=fp8.json", "--json=peer-fp8.json",
            "-q", env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, f"peer dry-run json: {r.stderr}"
    rows = load("peer-fp8.json")["results"]
    assert rows and all(x["status"] == "unsupported" and "FP8 K/V cache" in x["reason"] for x in rows), rows
    assert all(x["problem"]["kv_dtype"] == "fp8_e4m3" and x["problem"]["kv_scale"] == "head" for x in rows), rows
    out = run(attnbench, "report", "peer-fp8.json")
    assert out.returncode == 0 and "kv=e4m3/head" in out.stdout, out.stderr


def test_report_reads_peer_rows(attnbench, in_module_work):
    r = run(attnbench, "report", "peer.json")
    assert r.returncode == 0, f"attnbench report reads the peer rows: {r.stderr}"


def test_peer_torch_compiles(src):
    path = str(src / "scripts" / "peer_torch.py")
    compile(open(path).read(), path, "exec")


def test_mixed_suite_is_its_two_calls(attnbench, work):
    # configs/llama3.1-8b-mixed.json: the mixed batch (one call) does the work of its decode rows and its prefill
    # chunks posed as two calls: the same FLOPs and the same bytes, so their times compare directly.
    r = run(attnbench, "grid", "--config=llama3.1-8b-mixed", "--json=-")
    assert r.returncode == 0, r.stderr
    mixed, decode, chunks = json.loads(r.stdout)
    assert mixed["q_lens_values"].count(1) == 56 and mixed["q_lens_values"].count(512) == 8
    assert mixed["flops"] == pytest.approx(decode["flops"] + chunks["flops"], rel=1e-12)
    assert mixed["bytes"] == pytest.approx(decode["bytes"] + chunks["bytes"], rel=1e-12)
