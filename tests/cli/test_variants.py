"""The sliding window, soft-capping and attention sinks (--window, --softcap, --sinks; issue 47) through the real
binary on the CPU backend: every built-in strategy runs them, verified against the fp64 reference, on awkward
shapes (a window of 1, one ending inside a page, one longer than the sequence, q_len 1 and > 1, GQA, ragged
lengths, paged and contiguous, fp16 and bf16, causal and not); the FLOPs and bytes a row reports count only the
pairs and K/V rows inside the window (and a sink logit a head); a peer (a plugin: its ABI carries none of them)
gets an `unsupported` row naming the variant; PyTorch's SDPA peers take the window as an explicit boolean mask
and refuse the cap and the sinks; bad values are one line and exit 2."""
import json
import os
import sys

import pytest

from cli_helpers import run

FAST = ["--backend=cpu", "--warmup=0", "--min_samples=1", "--max_time=0.01", "--verify", "-q"]


def rows(path):
    with open(path) as f:
        return json.load(f)["results"]


def test_every_built_in_strategy_runs_them_verified(attnbench, work):
    r = run(attnbench, "run", *FAST, "--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=37", "--q_len=1,6",
            "--head_dim=16", "--window=1,13,60", "--softcap=2", "--causal=false,true",
            "--page_size=16", "--kv_layout=contiguous,paged", "--dtype=fp16,bf16", "--json=v.json")
    assert r.returncode == 0, r.stderr[-2000:]
    got = rows("v.json")
    strategies = {x["strategy"] for x in got}
    assert {"head_batched", "fully_batched", "nested", "fused"} <= strategies, strategies
    assert got and all(x["status"] == "ok" and x["verify"]["passed"] for x in got), \
        [(x["strategy"], x["problem"], x.get("reason")) for x in got if x["status"] != "ok"][:5]
    assert all(x["problem"]["window"] in (1, 13, 60) and x["problem"]["softcap"] == 2 for x in got)


def test_ragged_lengths_shorter_than_the_window(attnbench, work):
    r = run(attnbench, "run", *FAST, "--kv_lens=list:5,40,17", "--heads=2", "--kv_heads=1", "--q_len=3",
            "--head_dim=8", "--window=8", "--causal", "--page_size=4", "--kv_layout=paged", "--json=r.json")
    assert r.returncode == 0, r.stderr[-2000:]
    got = rows("r.json")
    assert got and all(x["status"] == "ok" for x in got), [(x["strategy"], x.get("reason")) for x in got]


def brute_force(batch, heads, kv_heads, lens, q_len, head_dim, window, causal):
    pairs, kv_rows = 0, 0
    for L in lens:
        seen = set()
        for i in range(q_len):
            pos = i + L - q_len
            for j in range(L):
                if j >= pos - window and (not causal or j <= pos):
                    pairs += heads
                    seen.add(j)
        kv_rows += len(seen)
    es = 2
    return 4.0 * pairs * head_dim, (2 * batch * heads * q_len * head_dim + 2 * kv_heads * kv_rows * head_dim) * es


@pytest.mark.parametrize("causal", [False, True])
def test_flops_and_bytes_count_only_what_the_window_lets_in(attnbench, work, causal):
    args = ["--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=50", "--q_len=20", "--head_dim=8", "--window=7",
            f"--causal={'true' if causal else 'false'}"]
    r = run(attnbench, "grid", *args, "--format=json")
    assert r.returncode == 0, r.stderr[-1000:]
    (p,) = json.loads(r.stdout)
    flops, nbytes = brute_force(2, 4, 2, [50, 50], 20, 8, 7, causal)
    assert p["flops"] == pytest.approx(flops, rel=1e-12) and p["bytes"] == pytest.approx(nbytes, rel=1e-12), p
    assert "win=7" in p["label"], p["label"]


def test_a_peer_runs_the_variants_its_table_declares_and_refuses_the_others(attnbench, work):
    # cpu-example declares all three (plugin.h, ab_plugin.variants) and runs them verified, with GQA, paged,
    # q_len > 1 and causal; cpu-old-table, built from the same source with a table that stops before the field
    # (as tables built before it do), declares none: its rows are `unsupported` naming the variant.
    d = os.path.dirname(attnbench)
    peers = os.path.join(d, "test-peers") + os.pathsep + os.path.join(d, "test-peers-layouts")
    r = run(attnbench, "run", *FAST, "--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=45", "--q_len=1,5",
            "--head_dim=8", "--window=6", "--softcap=3", "--sinks=false,true", "--causal", "--page_size=8",
            "--kv_layout=paged", "--peers=cpu-example,cpu-old-table", "--json=p.json", env={"ATTNBENCH_PEERS_DIR": peers})
    assert r.returncode == 0, r.stderr[-2000:]
    got = rows("p.json")
    example = [x for x in got if x["strategy"] == "peer:cpu-example"]
    old = [x for x in got if x["strategy"] == "peer:cpu-old-table"]
    assert len(example) == 4 and all(x["status"] == "ok" and x["verify"]["passed"] for x in example), example[:2]
    assert len(old) == 4 and all(x["status"] == "unsupported" and "sliding window" in x["reason"] for x in old), old[:2]
    r = run(attnbench, "run", *FAST, "--batch=1", "--heads=2", "--seq_len=24", "--head_dim=8", "--sinks",
            "--peers=cpu-old-table", "--json=o.json", env={"ATTNBENCH_PEERS_DIR": peers})
    assert r.returncode == 0, r.stderr[-2000:]
    (old,) = [x for x in rows("o.json") if x["strategy"] == "peer:cpu-old-table"]
    assert old["status"] == "unsupported" and "sinks" in old["reason"], old


@pytest.mark.parametrize("flag", ["--window=0", "--window=-3", "--window=abc", "--softcap=0", "--softcap=2.5",
                                  "--softcap=-1", "--sinks=maybe", "--sinks=2"])
def test_bad_values_are_one_line_and_exit_2(attnbench, work, flag):
    r = run(attnbench, "run", "--backend=cpu", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8", flag)
    assert r.returncode == 2, (flag, r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and flag.split("=")[0] in lines[0], (flag, r.stderr)


def test_pytorch_peers_plan_the_window_as_a_mask_and_refuse_the_cap(attnbench, src, work):
    # peer_torch plans without torch (--dry-run): the window goes into the explicit boolean mask; soft-capping,
    # which no SDPA backend has, is an unsupported row naming it.
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--batch=1", "--heads=4", "--kv_heads=2",
            "--seq_len=64", "--q_len=16", "--head_dim=64", "--causal", "--window=8", "--softcap=50",
            "--json=pt.json", env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "sliding window 8 via explicit bool mask" in r.stdout and "win=8 cap=50" in r.stdout, r.stdout[-2000:]
    got = rows("pt.json")
    assert got and all(x["status"] == "unsupported" and "soft-capping" in x["reason"] for x in got), got[:2]
    assert all(x["problem"]["window"] == 8 and x["problem"]["softcap"] == 50 for x in got)
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--batch=1", "--heads=2", "--seq_len=40",
            "--head_dim=64", "--window=5", "--json=pw.json", env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, r.stderr[-2000:]
    assert all("soft-capping" not in x.get("reason", "") for x in rows("pw.json"))


def test_sinks_run_verified_with_the_other_variants_and_both_packings(attnbench, work):
    # The sink logits are seeded: two runs with one seed verify against the same reference; --sinks=false,true
    # gives both problems, and the sinks change the answer (a run that dropped them would fail: test_variants).
    for packing in ("on", "off"):
        r = run(attnbench, "run", *FAST, "--batch=3", "--heads=6", "--kv_heads=1,3", "--seq_len=29", "--q_len=1,4",
                "--head_dim=16", "--sinks=false,true", "--window=5", "--softcap=30", "--causal=false,true",
                "--page_size=8", "--kv_layout=paged,contiguous", "--dtype=bf16", f"--gqa_packing={packing}",
                f"--json=s-{packing}.json")
        assert r.returncode == 0, r.stderr[-2000:]
        got = rows(f"s-{packing}.json")
        assert {"head_batched", "fully_batched", "nested", "ptr_array", "fused"} <= {x["strategy"] for x in got}
        assert all(x["status"] == "ok" and x["verify"]["passed"] for x in got), \
            [(x["strategy"], x["problem"], x.get("reason")) for x in got if x["status"] != "ok"][:5]
        with_sinks = [x for x in got if x["problem"].get("sinks") is True]
        assert with_sinks and len(with_sinks) * 2 == len(got), len(with_sinks)
        assert all("sinks" not in x["problem"] for x in got if x not in with_sinks)


def test_sinks_are_counted_and_a_peer_refuses_them(attnbench, work):
    r = run(attnbench, "grid", "--batch=2", "--heads=6", "--kv_heads=2", "--seq_len=40", "--head_dim=8",
            "--sinks=false,true", "--json=-")
    assert r.returncode == 0, r.stderr[-1000:]
    plain, sinks = json.loads(r.stdout)
    assert sinks["sinks"] is True and "sinks" not in plain, (plain, sinks)
    assert sinks["label"].endswith(" sinks") and "sinks" not in plain["label"], (plain, sinks)
    assert sinks["bytes"] == plain["bytes"] + 4 * 6 and sinks["flops"] == plain["flops"], (plain, sinks)
    peers = os.path.join(os.path.dirname(attnbench), "test-peers-layouts")
    r = run(attnbench, "run", *FAST, "--batch=1", "--heads=2", "--seq_len=24", "--head_dim=8", "--sinks",
            "--peers=cpu-old-table", "--json=p.json", env={"ATTNBENCH_PEERS_DIR": peers})
    assert r.returncode == 0, r.stderr[-2000:]
    by = {x["strategy"]: x for x in rows("p.json")}
    assert by["fused"]["status"] == "ok", by["fused"]
    assert by["peer:cpu-old-table"]["status"] == "unsupported" and "sinks" in by["peer:cpu-old-table"]["reason"]


def test_pytorch_peers_refuse_the_sinks(attnbench, src, work):
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--batch=1", "--heads=4", "--seq_len=64",
            "--head_dim=64", "--sinks", "--json=ps.json", env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, r.stderr[-2000:]
    got = rows("ps.json")
    assert got and all(x["status"] == "unsupported" and "attention sinks" in x["reason"] for x in got), got[:2]
    assert all(x["problem"]["sinks"] is True for x in got)


def test_a_value_head_dim_runs_verified_and_is_refused_by_name_where_undeclared(attnbench, src, work):
    # --head_dim_v (MLA's V and O of their own width): every built-in strategy on the CPU and the cpu-example peers
    # (head-major and token-major: O permuted at its own width) verified; cpu-old-table declares no variant: its
    # rows are unsupported naming it; V as wide as K is the plain problem (no field, no label fragment).
    d = os.path.dirname(attnbench)
    peers = os.path.join(d, "test-peers") + os.pathsep + os.path.join(d, "test-peers-layouts")
    r = run(attnbench, "run", *FAST, "--batch=2", "--heads=4", "--kv_heads=1", "--seq_len=45", "--q_len=1,3",
            "--head_dim=24", "--head_dim_v=16,24,40", "--causal", "--page_size=8", "--kv_layout=paged",
            "--peers=cpu-example,cpu-tokens,cpu-old-table", "--json=v.json", env={"ATTNBENCH_PEERS_DIR": peers})
    assert r.returncode == 0, r.stderr[-2000:]
    got = rows("v.json")
    split = [x for x in got if "head_dim_v" in x["problem"]]
    assert {x["problem"]["head_dim_v"] for x in split} == {16, 40}
    assert all("Dv=" not in x.get("label", "") for x in got if "head_dim_v" not in x["problem"])
    for x in split:
        if x["strategy"] == "peer:cpu-old-table":
            assert x["status"] == "unsupported" and "value head dim" in x["reason"], x
        else:
            assert x["status"] == "ok" and x["verify"]["passed"], (x["strategy"], x.get("reason"))
    ran = {x["strategy"] for x in split if x["status"] == "ok"}
    assert {"nested", "head_batched", "fully_batched", "ptr_array", "fused", "peer:cpu-example",
            "peer:cpu-tokens"} <= ran, ran
    r = run(attnbench, "run", "--backend=cpu", "--batch=1", "--heads=1", "--seq_len=16", "--head_dim=8",
            "--head_dim_v=0")
    assert r.returncode == 2 and len([l for l in r.stderr.splitlines() if l.strip()]) == 1, r.stderr
    # PyTorch's peers pose V as wide as K: a row with its own width is unsupported, naming it.
    r = run(sys.executable, src / "scripts" / "peer_torch.py", "--dry-run", "--merge", "v.json",
            env={"ATTNBENCH": attnbench})
    assert r.returncode == 0, r.stderr[-2000:]
    torch_rows = [x for x in rows("v.json") if x["strategy"].startswith("peer:torch") and "head_dim_v" in x["problem"]]
    assert torch_rows and all(x["status"] == "unsupported" and "head_dim_v" in x["reason"] for x in torch_rows), \
        torch_rows[:2]
