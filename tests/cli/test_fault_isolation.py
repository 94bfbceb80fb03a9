"""A strategy that breaks the device context (injected with ATTNBENCH_INJECT_FAULT) fails with the shape,
the strategy and the error, while every other strategy of every problem still runs (in a fresh process
where the context cannot be rebuilt), and the report is complete."""
import json

from cli_helpers import run


def test_sticky_fault_fails_only_its_strategy(attnbench, work):
    r = run(attnbench, "--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=32,48", "--head_dim=16",
            "--verify", "--json=r.json", env={"ATTNBENCH_INJECT_FAULT": "head_batched"})
    assert r.returncode == 1, f"rc={r.returncode}:\n{r.stderr[-2000:]}"
    report = json.load(open("r.json"))
    rows = report["results"]
    assert len(rows) == 2 * 5, len(rows)
    for x in rows:
        if x["strategy"] == "head_batched":
            assert x["status"] == "failed", x
            reason = x["reason"]
            assert "injected sticky fault" in reason and "S=%d" % x["problem"]["seq_len"] in reason, reason
        else:
            assert x["status"] == "ok" and x["verify"]["passed"], x
    assert any("fresh process" in w for w in report["warnings"]), report["warnings"]
