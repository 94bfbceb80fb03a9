"""Token-major plugins (plugin.h, ab_qo_layout) through the real binary: a plugin that declares AB_QO_TOKEN_MAJOR gets
Q as [B*q_len, H, D] and writes O in that order, and attnbench permutes outside the timed forwards, so its rows verify
on every shape; a plugin that indexes token-major but declares nothing is `incorrect` (the permutation is what makes
the first one right); a table built before the field existed (struct_size ending at teardown) loads as head-major;
`list` says which order each peer takes; a plugin that writes O only in its setup is `incorrect` in either order. The
peers are the CPU example of examples/plugins built five ways (tests/plugins/CMakeLists.txt, folder
test-peers-layouts)."""
import json
import os

import pytest

from cli_helpers import run

FAST = ["--backend=cpu", "--warmup=0", "--min_samples=1", "--max_time=0.01", "--verify"]
# q_len > 1 with GQA, B > 1, a ragged-free odd length, causal and not, both dtypes, one query token too.
SHAPES = FAST + ["--batch=1,3", "--heads=6", "--kv_heads=2", "--seq_len=37", "--q_len=1,5", "--head_dim=8",
                 "--causal=0,1", "--dtype=fp16,bf16"]


@pytest.fixture(scope="module")
def layouts_dir(attnbench):
    d = os.path.join(os.path.dirname(attnbench), "test-peers-layouts")
    assert os.path.isdir(d), f"the test peers were not built: {d} is missing"
    return d


def rows(path, strategy):
    with open(path) as f:
        return [r for r in json.load(f)["results"] if r["strategy"] == strategy]


def test_token_major_peer_verifies_on_every_shape(attnbench, layouts_dir, work):
    r = run(attnbench, *SHAPES, "-q", "--peers=cpu-tokens", "--json=t.json", env={"ATTNBENCH_PEERS_DIR": layouts_dir})
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    got = rows("t.json", "peer:cpu-tokens")
    assert len(got) == 16, [(x["problem"], x["status"]) for x in got]
    for x in got:
        assert x["status"] == "ok" and x["verify"]["passed"], x


def test_undeclared_token_major_indexing_is_incorrect(attnbench, layouts_dir, work):
    # The same code without the declaration reads Q and writes O in the wrong order: wrong wherever H*q_len > 1.
    r = run(attnbench, *FAST, "-q", "--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=37", "--q_len=1,3",
            "--head_dim=8", "--peers=cpu-tokens-undeclared", "--json=u.json", env={"ATTNBENCH_PEERS_DIR": layouts_dir})
    got = rows("u.json", "peer:cpu-tokens-undeclared")
    assert len(got) == 2, r.stderr[-2000:]
    by_q = {x["problem"]["q_len"]: x for x in got}
    assert by_q[3]["status"] == "incorrect", by_q[3]
    # q_len 1: both orders are the same memory, so the row is right.
    assert by_q[1]["status"] == "ok", by_q[1]


@pytest.mark.parametrize("peer", ["cpu-setup-only", "cpu-tokens-setup-only"])
def test_output_written_only_in_setup_is_incorrect(attnbench, layouts_dir, work, peer):
    # The forward runs once in the plugin's setup and never again: the O verified after the counted forward must
    # be that forward's, so the row is `incorrect` (NaN everywhere) in either order, a token-major plugin's own O
    # being poisoned after setup too.
    r = run(attnbench, *FAST, "-q", "--batch=2", "--heads=4", "--kv_heads=2", "--seq_len=37", "--q_len=3",
            "--head_dim=8", f"--peers={peer}", "--json=s.json", env={"ATTNBENCH_PEERS_DIR": layouts_dir})
    got = rows("s.json", f"peer:{peer}")
    assert len(got) == 1, r.stderr[-2000:]
    assert got[0]["status"] == "incorrect" and "NaN" in got[0]["reason"], got[0]


def test_table_without_the_field_loads_head_major(attnbench, layouts_dir, work):
    r = run(attnbench, *SHAPES, "-q", "--peers=cpu-old-table", "--json=o.json", env={"ATTNBENCH_PEERS_DIR": layouts_dir})
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    got = rows("o.json", "peer:cpu-old-table")
    assert len(got) == 16 and all(x["status"] == "ok" for x in got), [(x["problem"], x["status"]) for x in got]


def test_list_names_each_peers_order(attnbench, layouts_dir, work):
    r = run(attnbench, "list", env={"ATTNBENCH_PEERS_DIR": layouts_dir})
    assert r.returncode == 0, r.stderr[-2000:]
    lines = {name: next(l for l in r.stdout.splitlines() if f"peer:{name}" in l)
             for name in ("cpu-tokens", "cpu-old-table")}
    assert "token-major" in lines["cpu-tokens"], r.stdout
    assert "token-major" not in lines["cpu-old-table"], r.stdout
