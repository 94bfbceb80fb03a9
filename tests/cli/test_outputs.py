"""Issue 18: run/tune write --json/--md/--csv to files or '-' (stdout), every report before anything is printed,
the CSV carries every column, `report --format=json|md|csv`, `list` and `list --format=json`, --profile.

The tests run in order in one scratch folder: the first run's report (out.json, r.csv) is read by the later ones."""
import csv
import json
import os
import re
import subprocess

from cli_helpers import expect_exit, run

SMALL = ["--backend=cpu", "--batch=1", "--heads=4", "--kv_heads=2", "--seq_len=37", "--q_len=5", "--head_dim=32",
         "--pages=3", "--causal", "--max_time=0.02", "--min_samples=3", "--verify"]


def test_json_to_stdout_is_the_report_alone(attnbench, in_module_work):
    # --json=- puts the whole report on stdout and nothing else there; the files are written too.
    r = run(attnbench, *SMALL, "--json=-", "--md=r.md", "--csv=r.csv")
    open("out.json", "w").write(r.stdout)
    assert r.returncode == 0, f"run --json=-: exit {r.returncode}: {r.stderr[-2000:]}"
    d = json.loads(r.stdout)
    assert d["schema"] == "attnbench.report/1" and len(d["results"]) == 5, "stdout of --json=- is not the report alone"
    assert re.search(r"^### attnbench on", open("r.md").read(), re.M), "--md file"
    assert "median ms" not in r.stderr, "the table went to stderr"


def test_csv_has_every_column(in_module_work):
    # The CSV: one line per row, every line as many fields as the header, the table's and report's columns there.
    rows = list(csv.reader(open("r.csv")))
    head = rows[0]
    assert len(rows) == 6, len(rows)
    assert all(len(r) == len(head) for r in rows), "ragged CSV"
    need = ["strategy", "status", "median_ms", "noise", "tflops", "gbps", "copy_fraction", "launches_expected",
            "launches_measured", "rel_l2_err", "timer", "stop_reason", "noise_met", "rounds", "host_median_ms", "tile",
            "tile_source", "config_source", "gemm_algos", "launch_formula", "kernel_names", "kv_heads", "q_len",
            "kv_lens", "max_abs_err", "tolerance"]
    missing = [c for c in need if c not in head]
    assert not missing, missing
    d = {r[head.index("strategy")]: dict(zip(head, r)) for r in rows[1:]}
    rep = json.load(open("out.json"))
    fused = d["fused"]
    assert fused["tile"] and fused["timer"] == "events" and float(fused["host_median_ms"]) > 0, fused
    assert d["nested"]["gemm_algos"] and d["nested"]["q_len"] == "5" and d["nested"]["kv_heads"] == "2", d["nested"]
    for r in rep["results"]:
        assert abs(float(d[r["strategy"]]["median_ms"]) - r["time_ms"]["median"]) <= 1e-9 * r["time_ms"]["median"], r


def test_each_format_to_stdout(attnbench, in_module_work):
    # Every format to stdout in turn.
    for f in ("md", "csv"):
        r = run(attnbench, *SMALL, f"--{f}=-")
        assert r.returncode == 0, f"--{f}=- exit {r.returncode}: {r.stderr[-2000:]}"
    out = run(attnbench, *SMALL, "--md=-").stdout
    assert re.search(r"^\| problem", out, re.M), "--md=- table"
    assert "median ms  " not in out, "--md=- also printed the console table"


def test_two_outputs_to_stdout_or_one_file_refused(attnbench, in_module_work):
    # Two to stdout at once is refused before any work, nothing written.
    expect_exit(2, "only one output can go to stdout", attnbench, *SMALL, "--json=-", "--csv=-", "--md=n.md")
    assert not os.path.exists("n.md"), "a refused run wrote --md"
    expect_exit(2, "both write", attnbench, *SMALL, "--json=same", "--csv=same")
    expect_exit(2, "cannot write", attnbench, *SMALL, "--csv=/nonexistent-dir/x.csv")
    assert not os.path.exists("./-"), "a file named '-' was created"


def test_report_written_before_the_table(attnbench, in_module_work):
    # The report is written before the table: a reader that stops after 3 lines still leaves it whole
    # (`attnbench ... | head -3`: the pipe's reader goes away, the binary gets SIGPIPE as under a shell).
    if os.path.exists("h.json"):
        os.remove("h.json")
    p = subprocess.Popen([attnbench, *SMALL, "--json=h.json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for _ in range(3):
        p.stdout.readline()
    p.stdout.close()
    p.wait(timeout=300)
    assert len(json.load(open("h.json"))["results"]) == 5, "| head -3 lost the report"


def test_report_formats(attnbench, in_module_work):
    # report --format=json|md|csv over the stored report; the CSV equals the run's own.
    r = subprocess.run([attnbench, "report", "out.json", "--csv=-"], capture_output=True)  # bytes, as cmp
    assert r.returncode == 0, f"report --format=csv: {r.stderr!r}"
    assert r.stdout == open("r.csv", "rb").read(), "report --format=csv differs from run --csv"
    d = json.loads(run(attnbench, "report", "out.json", "--json=-").stdout)
    row = [x for x in d["rows"] if x["strategy"] == "fused"][0]
    assert row["tile"] and row["timer"] == "events" and row["host_median_ms"] > 0 and row["stop_reason"], (
        "report --format=json lacks the extra columns", row)
    assert re.search(r"^\| problem", run(attnbench, "report", "out.json", "--md=-").stdout, re.M), \
        "report --format=md"


def test_tune_outputs(attnbench, in_module_work):
    # tune: the summary to stdout as JSON, CSV to a file; the cache still written; the text summary off stdout.
    r = run(attnbench, "tune", "--backend=cpu", "--batch=1", "--heads=2", "--seq_len=40", "--head_dim=32",
            "--strategies=fused,head_batched", "--max_time=0.02", "--min_samples=2", "--cache=c.json", "--json=-",
            "--csv=t.csv", "-q")
    assert r.returncode == 0, f"tune --json=-: exit {r.returncode}: {r.stderr[-2000:]}"
    d = json.loads(r.stdout)
    assert d["schema"] == "attnbench.tune-summary/1", d["schema"]
    kinds = sorted({x["kind"] for x in d["rows"]})
    assert kinds == ["fused", "gemm"], kinds
    assert all(x["candidates"] >= x["ok"] >= 1 and x["best_ms"] > 0 for x in d["rows"]), d["rows"]
    # A fused row lists every tile it tried, the default first, each with its status and time; the best is one.
    fused = [x for x in d["rows"] if x["kind"] == "fused"][0]
    tiles = fused["tiles"]
    assert len(tiles) == fused["candidates"] and tiles[0]["default"] and tiles[0]["tile"] == fused["baseline"], tiles
    assert sum(t["status"] == "ok" for t in tiles) == fused["ok"], tiles
    assert all(t["ms"] > 0 for t in tiles if t["status"] == "ok"), tiles
    assert min(t["ms"] for t in tiles if t["status"] == "ok") == fused["best_ms"], (tiles, fused["best_ms"])
    assert all(x["tiles"] == [] for x in d["rows"] if x["kind"] == "gemm"), d["rows"]
    rows = list(csv.reader(open("t.csv")))
    assert len(rows) == len(d["rows"]) + 1 and rows[0][0] == "kind", rows
    assert json.load(open("c.json"))["schema"] == "attnbench.cache/1"
    assert re.search(r"wrote .* entries", r.stderr), "tune: the cache line left stderr"
    expect_exit(2, "only one output", attnbench, "tune", "--backend=cpu", "--dry_run", "--json=-", "--md=-")


def test_tune_dry_run_summaries(attnbench, in_module_work):
    # A dry run times nothing: its summary (JSON, markdown, CSV) lists the fused tiles it would try, the default
    # first, with no times. Found by probing the CLI: every summary format of a dry run crashed (SIGSEGV).
    base = ["tune", "--backend=cpu", "--batch=1", "--heads=2", "--seq_len=40", "--head_dim=32",
            "--strategies=fused,head_batched", "--dry_run", "-q"]
    r = run(attnbench, *base, "--json=-")
    assert r.returncode == 0, f"tune --dry_run --json=-: exit {r.returncode}: {r.stderr[-2000:]}"
    d = json.loads(r.stdout)
    assert d["dry_run"] is True, d
    fused = [x for x in d["rows"] if x["kind"] == "fused"][0]
    assert fused["ok"] == 0 and fused["best_ms"] is None and fused["baseline_ms"] is None, fused
    tiles = fused["tiles"]
    assert tiles and tiles[0]["default"] and all(t["status"] == "listed" and t["ms"] is None for t in tiles), tiles
    assert fused["baseline"] == tiles[0]["tile"], fused
    for flag in ("--md=dry.md", "--csv=dry.csv"):
        r = run(attnbench, *base, flag)
        assert r.returncode == 0, f"tune --dry_run {flag}: exit {r.returncode}: {r.stderr[-2000:]}"
    assert "fused" in open("dry.md").read() and "fused" in open("dry.csv").read()


def test_list_text_and_json(attnbench, src, in_module_work):
    # list: every section, and the same as JSON.
    r = run(attnbench, "list")
    assert r.returncode == 0, f"list: {r.stderr}"
    for s in ("strategies", "backends:", "devices:", "timers (--timer):", "fused tiles (--tile",
              "suites (--config=NAME):", "plugins (--plugin=PATH):"):
        assert s in r.stdout, f"list lacks {s!r}"
    assert re.search(r"^  ci  *", r.stdout, re.M), "list lacks the ci suite"
    d = json.loads(run(attnbench, "list", "--json=-").stdout)
    assert d["schema"] == "attnbench.list/1"
    assert {s["name"] for s in d["strategies"]} == {"nested", "head_batched", "fully_batched", "ptr_array", "fused"}
    assert [t["name"] for t in d["timers"]] == ["events", "graph", "cupti"]
    tiles = d["fused_tiles"]
    assert tiles and all(t["head_dims_fp16"] for t in tiles), tiles
    # The head_dims where a tile applies the window, soft-cap and sinks: some of those it runs; on the CPU backend,
    # whose fused path applies all three, every one.
    for t in tiles:
        assert set(t["head_dims_variants"]) <= set(t["head_dims_fp16"]), t
        if t["backend"] == "cpu":
            assert t["head_dims_variants"] == t["head_dims_fp16"], t
    assert "variants D=" in r.stdout, r.stdout
    # Each tile's family is the one its name spells (core/fused_tile.hpp).
    def family(name):
        if name.startswith("decode"):
            return "decode-ws" if name.startswith("decode-ws") else "decode"
        return "prefill-wsp" if name.endswith("wsp") else "prefill-ws" if name.endswith("ws") else "prefill"
    assert all(t["family"] == family(t["name"]) and t["kind"] == t["family"].split("-")[0] for t in tiles), tiles
    for t in tiles:  # the text shows each tile's family beside its name
        assert re.search(rf"^  {re.escape(t['name'])}  +{re.escape(t['family'])}( |$)", r.stdout, re.M), (t, r.stdout)
    names = {s["name"]: s for s in d["suites"]}
    want = sorted(f[:-5] for f in os.listdir(src / "configs") if f.endswith(".json"))
    assert sorted(names) == want, (sorted(names), want)
    assert names["ci"]["description"], names["ci"]
    assert d["plugins"] == []
    expect_exit(2, "--format", attnbench, "list", "--format=yaml")
    expect_exit(2, "attnbench list", attnbench, "--backend=cpu", "--tile=m1n2")


def test_every_listed_prefill_tile_runs(attnbench, in_module_work):
    # Every prefill tile list shows runs at a head_dim list gives it, on the backend list names.
    tiles = [(t["backend"], t["name"], t["head_dims_fp16"][-1])
             for t in json.loads(run(attnbench, "list", "--json=-").stdout)["fused_tiles"] if t["kind"] == "prefill"]
    assert tiles, "list shows no prefill tile"
    for backend, tile, d in tiles:
        r = run(attnbench, f"--backend={backend}", "--batch=1", "--heads=1", "--seq_len=70", f"--head_dim={d}",
                "--strategies=fused", f"--tile={tile}", "--max_time=0.01", "--min_samples=1", "--verify", "-q")
        assert r.returncode == 0, f"listed tile {tile} (D={d}) does not run on {backend}: {r.stderr[-2000:]}"


def test_profile(attnbench, in_module_work):
    # --profile: every row ok and untimed (one forward each), the report says so; timing flags beside it refused.
    r = run(attnbench, *SMALL, "--profile", "--json=p.json")
    assert r.returncode == 0, f"--profile exit {r.returncode}: {r.stderr[-2000:]}"
    d = json.load(open("p.json"))
    assert d["settings"]["profile"] is True
    assert all(x["status"] == "ok" and "time_ms" not in x and x["verify"]["passed"] for x in d["results"]), \
        d["results"]
    assert "profiling mode" in r.stdout + r.stderr, "--profile: the table's header does not say profiling mode"
    expect_exit(2, "--rounds", attnbench, *SMALL, "--profile", "--rounds=3")
    expect_exit(2, "--samples", attnbench, *SMALL, "--profile", "--samples")
