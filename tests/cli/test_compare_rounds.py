"""Issue 49, through the real binary: `compare` of two reports made with default settings (one round) does not
cry wolf (a change a second process can give is `ambiguous` with its reason, exit 0; beyond the one-round
allowance it is still `slower`, exit 1; reports with rounds keep the threshold-and-noise rule), and the CSVs
of `report` and `compare` read back with Python's csv module: a field holding a comma, a quote, CR and LF
comes back whole, and every line has the header's cells (matched, missing and new rows alike)."""
import copy
import csv
import json

from cli_helpers import run

TINY = ["--backend=cpu", "--quiet", "--batch=1", "--heads=2", "--seq_len=16", "--head_dim=8", "--max_time=0.05"]
REASON = 'broke, "badly"\r\nsee the log'


def read_csv(path):
    with open(path, newline="") as f:  # newline="": the csv module sees CR and LF inside quoted fields
        return list(csv.reader(f))


def save(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def report(attnbench, name):
    r = run(attnbench, *TINY, f"--json={name}")
    assert r.returncode == 0, r.stderr
    with open(name) as f:
        return json.load(f)


def row(doc, strategy):
    return next(x for x in doc["results"] if x["strategy"] == strategy)


def one_round(doc, noise=0.005):
    """Every ok row with a small known noise and enough samples, as one round (the default)."""
    doc = copy.deepcopy(doc)
    for x in doc["results"]:
        if x["status"] == "ok":
            x["time_ms"]["noise"] = noise
            x["time_ms"]["samples"] = max(x["time_ms"].get("samples", 0), 10)
            x.pop("rounds", None)
    return doc


def compare_json(attnbench, base, new):
    r = run(attnbench, "compare", base, new, "--json=-")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def verdict(c, strategy):
    return next(x for x in c["rows"] if x["strategy"] == strategy)


def test_one_round_reports_do_not_cry_wolf(attnbench, work):
    base = one_round(report(attnbench, "base.json"))
    assert base["settings"].get("rounds", 1) == 1, base["settings"]
    m = row(base, "nested")["time_ms"]["median"]
    new = copy.deepcopy(base)
    row(new, "nested")["time_ms"]["median"] = m * 1.2
    save("b.json", base), save("n.json", new)
    rc, c = compare_json(attnbench, "b.json", "n.json")
    v = verdict(c, "nested")
    assert rc == 0 and v["verdict"] == "ambiguous", (rc, v)
    assert v["verdict_reason"] == "one round: between-process spread unknown; rerun with --rounds>=4", v
    assert c["counts"]["slower"] == 0 and c["counts"]["ambiguous_one_round"] == 1 and c["exit_code"] == 0, c["counts"]
    console = run(attnbench, "compare", "b.json", "n.json")
    assert console.returncode == 0 and "ambiguous*" in console.stdout, console.stdout
    assert "* one round: between-process spread unknown; rerun with --rounds>=4" in console.stdout, console.stdout
    # The other way round (-17%) is not faster either.
    rc, c = compare_json(attnbench, "n.json", "b.json")
    assert rc == 0 and verdict(c, "nested")["verdict"] == "ambiguous", verdict(c, "nested")
    # 2x in one round is beyond what a second process gives: slower, exit 1.
    row(new, "nested")["time_ms"]["median"] = m * 2
    save("n2.json", new)
    rc, c = compare_json(attnbench, "b.json", "n2.json")
    assert rc == 1 and verdict(c, "nested")["verdict"] == "slower", (rc, verdict(c, "nested"))
    # With rounds on both sides the threshold-and-noise rule alone decides: +20% is slower.
    for doc in (base, new):
        doc["settings"]["rounds"] = 20
        for x in doc["results"]:
            if x["status"] == "ok":
                x["rounds"] = {"count": 20, "error": 0.005}
    row(new, "nested")["time_ms"]["median"] = m * 1.2
    save("b20.json", base), save("n20.json", new)
    rc, c = compare_json(attnbench, "b20.json", "n20.json")
    assert rc == 1 and verdict(c, "nested")["verdict"] == "slower", (rc, verdict(c, "nested"))
    assert "verdict_reason" not in verdict(c, "nested")


def test_csv_fields_round_trip_and_lines_have_the_header_s_cells(attnbench, work):
    base = report(attnbench, "base.json")
    new = copy.deepcopy(base)
    # fused: ok -> failed with a reason full of separators; ptr_array missing from the new run; a new row.
    fused = row(new, "fused")
    fused["status"], fused["reason"] = "failed", REASON
    fused.pop("time_ms", None)
    extra = copy.deepcopy(row(new, "head_batched"))
    extra["problem"]["seq_len"] = extra["problem"]["page_size"] = 32
    new["results"] = [x for x in new["results"] if x["strategy"] != "ptr_array"] + [extra]
    save("n.json", new)

    r = run(attnbench, "report", "n.json", "--csv=r.csv")
    assert r.returncode == 0, r.stderr
    rows = read_csv("r.csv")
    head = rows[0]
    assert len(rows) == 1 + len(new["results"]) and all(len(x) == len(head) for x in rows), [len(x) for x in rows]
    got = [dict(zip(head, x)) for x in rows[1:]]
    assert next(x for x in got if x["strategy"] == "fused")["reason"] == REASON

    r = run(attnbench, "compare", "base.json", "n.json", "--csv=c.csv")
    assert r.returncode == 1, r.stderr  # ok -> failed is worse
    rows = read_csv("c.csv")
    head = rows[0]
    assert head[-3:] == ["verdict", "reason", "verdict_reason"], head
    assert all(len(x) == len(head) for x in rows), [len(x) for x in rows]
    got = [dict(zip(head, x)) for x in rows[1:]]
    by_verdict = {}
    for x in got:
        by_verdict.setdefault(x["verdict"], []).append(x)
    worse = by_verdict["worse"][0]
    assert worse["strategy"] == "fused" and worse["reason"] == REASON and worse["new_status"] == "failed", worse
    missing, = by_verdict["missing"]
    assert missing["strategy"] == "ptr_array" and missing["base_status"] == "ok" and missing["base_ms"], missing
    assert missing["new_status"] == missing["new_ms"] == missing["reason"] == missing["verdict_reason"] == "", missing
    added, = by_verdict["new"]
    assert added["strategy"] == "head_batched" and added["seq_len"] == "32" and added["new_status"] == "ok", added
    assert added["new_ms"] and added["base_status"] == added["base_ms"] == added["limit"] == "", added
