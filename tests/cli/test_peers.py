"""In-process peers (--peers, docs/peers.md) driven through the real binary with the test peers of tests/plugins:
plugin libraries named libattnbench_peer_<name>.so in folders named by ATTNBENCH_PEERS_DIR. A peer's rows are
peer:<name>, verified and carrying their library's version, beside a --plugin of the same table name; a peer whose
kernels_per_forward is -1 has no launch contract; a named peer that is not found, or cannot be used, is one line
and exit 2, while --peers=all skips it with a note; a peer that crashes or hangs costs only its own rows, in one
process and on --devices workers; the peers run on suites, continue in a fresh process after a sticky fault and
are tuned; `list` shows the peers found, unavailable and missing; compare flags a changed library version."""
import json
import os
import re

import pytest

from cli_helpers import assert_one_line_error, expect_exit, run

FAST = ["--backend=cpu", "--warmup=0", "--min_samples=1", "--max_time=0.01"]
GRID = FAST + ["--batch=1,2", "--heads=2", "--kv_heads=1", "--seq_len=17,40", "--head_dim=8", "--verify"]
# Where a peer hangs until --plugin_timeout: one problem, or two for two workers.
ONE = FAST + ["--batch=1", "--heads=2", "--kv_heads=1", "--seq_len=17", "--head_dim=8", "--verify"]
TWO = FAST + ["--batch=1", "--heads=2", "--kv_heads=1", "--seq_len=17,40", "--head_dim=8", "--verify"]


@pytest.fixture(scope="module")
def peer_dirs(attnbench):
    """The test peers' folders beside the binary (tests/plugins/CMakeLists.txt builds them)."""
    build = os.path.dirname(attnbench)
    dirs = {k: os.path.join(build, d) for k, d in
            (("good", "test-peers"), ("v2", "test-peers-v2"), ("broken", "test-peers-broken"))}
    for d in dirs.values():
        assert os.path.isdir(d), f"the test peers were not built: {d} is missing"
    return dirs


def env_for(*dirs, **extra):
    return {"ATTNBENCH_PEERS_DIR": ":".join(dirs), **extra}


def no_segv_handler():
    """ASAN_OPTIONS with handle_segv=0 appended (scripts/sanitize.sh): a crashing peer's child or loader dies by its
    signal, not by ASan's report and exit 1 (detect_leaks=0: no leak report at a loader's exit either)."""
    have = os.environ.get("ASAN_OPTIONS", "")
    extra = "handle_segv=0:handle_abort=0:detect_leaks=0"
    return f"{have}:{extra}" if have else extra


# The test peers and the built-in strategies (a CUDA build's own peers may load beside them under --peers=all).
KNOWN = {"nested", "head_batched", "fully_batched", "ptr_array", "fused", "peer:cpu-example", "peer:broken-crash",
         "peer:broken-hang"}


def rows_of(path):
    with open(path) as f:
        return json.load(f)["results"]


def by_strategy(rows, strategy):
    return [r for r in rows if r["strategy"] == strategy]


def test_peer_rows_are_named_verified_and_versioned(attnbench, plugins, peer_dirs, work):
    # A peer beside a plugin of the same table name: peer:cpu-example and plugin:cpu-example, both verified.
    r = run(attnbench, *GRID, "-q", "--peers=cpu-example", f"--plugin={plugins}/libcpu_example_plugin.so",
            "--json=a.json", env=env_for(peer_dirs["good"]))
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    rows = rows_of("a.json")
    peer, plugin = by_strategy(rows, "peer:cpu-example"), by_strategy(rows, "plugin:cpu-example")
    assert len(peer) == 4 and len(plugin) == 4, sorted({x["strategy"] for x in rows})
    for x in peer:
        assert x["status"] == "ok" and x["verify"]["passed"], x
        assert x["library_version"] == "1.0.0-peer", x
        # kernels_per_forward -1: no contract, the launches still measured.
        assert "expected" not in x["launches"] and "match" not in x["launches"], x["launches"]
        assert x["launches"]["measured"]["kernels"] == 0, x["launches"]
        assert x["device"] == 0, x
    for x in plugin:
        assert x["status"] == "ok" and x["library_version"] == "1.0.0" and "expected" in x["launches"], x
    assert all("library_version" not in x for x in rows if x["strategy"] in ("fused", "nested")), rows
    # The table says what peer rows are; `report` reads the rows back with their version.
    assert "peer:cpu-example" in r.stdout and "in-process peers (--peers)" in r.stdout, r.stdout
    j = run(attnbench, "report", "a.json", "--json=-")
    assert j.returncode == 0, j.stderr
    flat = [x for x in json.loads(j.stdout)["rows"] if x["strategy"] == "peer:cpu-example"]
    assert len(flat) == 4 and all(x["peer"] for x in flat), flat


def test_peers_all_and_strategies(attnbench, peer_dirs, work):
    # --peers=all loads the peers found; --strategies=all includes them, --strategies names one.
    r = run(attnbench, *GRID, "-q", "--peers=all", "--strategies=fused,peer:cpu-example", "--json=all.json",
            env=env_for(peer_dirs["good"]))
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    assert {x["strategy"] for x in rows_of("all.json")} == {"fused", "peer:cpu-example"}
    # Without --peers the peer is unknown, and the line says how to load it.
    expect_exit(2, "a peer runs once --peers loads it", attnbench, *GRID, "--strategies=peer:cpu-example",
                env=env_for(peer_dirs["good"]))


@pytest.mark.parametrize("value, needle", [
    ("nosuch", "--peers: no peer named 'nosuch' (found: cpu-example;"),
    ("cudnn", "to get it: scripts/fetch-peers.sh, then rebuild"),
    ("torch-flash", "peer:torch-flash is a script peer: scripts/peer_torch.py"),
    ("all,cpu-example", "'all' stands alone"),
    ("cpu-example,cpu-example", "'cpu-example' is listed twice"),
    ("bad name", "'bad name' is not a peer name"),
])
def test_bad_peer_names(attnbench, peer_dirs, work, value, needle):
    expect_exit(2, needle, attnbench, *GRID, f"--peers={value}", "--json=bad.json", env=env_for(peer_dirs["good"]))
    assert not os.path.exists("bad.json")


def test_tune_refuses_a_missing_peer(attnbench, peer_dirs, work):
    expect_exit(2, "no peer named 'nosuch'", attnbench, "tune", *FAST, "--heads=1", "--seq_len=16", "--head_dim=8",
                "--peers=nosuch", "--cache=c.json", env=env_for(peer_dirs["good"]))


@pytest.mark.parametrize("name, needle", [
    ("cpu-unavailable", "cannot be used: libexample.so.9 is not installed"),
    ("misnamed", "its table is named 'cpu-example', not 'misnamed'"),
    ("broken-entry_crash", "cannot be used: loading it crashed: its loader process was killed by signal 11"),
])
def test_named_peer_that_cannot_be_used(attnbench, peer_dirs, work, name, needle):
    expect_exit(2, needle, attnbench, *GRID, f"--peers={name}",
                env=env_for(peer_dirs["broken"], ASAN_OPTIONS=no_segv_handler()))


def test_peers_all_skips_unusable_and_broken_peers_cost_their_rows(attnbench, peer_dirs, work):
    # --peers=all over the broken folder: the unusable peers skipped with a note each; the crashing and hanging
    # peers' rows failed with how, the good peer and the built-ins ok.
    r = run(attnbench, *ONE, "--no_table", "--plugin_timeout=3", "--peers=all", "--json=b.json",
            env=env_for(peer_dirs["good"], peer_dirs["broken"], ASAN_OPTIONS=no_segv_handler()))
    assert r.returncode == 1, f"rc={r.returncode}: {r.stderr[-3000:]}"
    for name in ("cpu-unavailable", "misnamed", "broken-entry_crash"):
        assert re.search(rf"note: --peers=all: peer:{name} \(.*\) is skipped: ", r.stderr), (name, r.stderr)
    rows = [x for x in rows_of("b.json") if x["strategy"] in KNOWN]
    assert {x["strategy"] for x in rows if x["strategy"].startswith("peer:")} == {
        "peer:cpu-example", "peer:broken-crash", "peer:broken-hang"}
    for x in rows:
        if x["strategy"] == "peer:broken-crash":
            assert x["status"] == "failed" and "crashed: its process was killed by signal 11" in x["reason"], x
        elif x["strategy"] == "peer:broken-hang":
            assert x["status"] == "failed" and "timed out" in x["reason"], x
        else:
            assert x["status"] == "ok" and x["verify"]["passed"], x
        if x["strategy"].startswith("peer:broken"):
            assert x["library_version"] == "0.0.1", x


def test_peers_all_finding_none_is_a_note(attnbench, work):
    empty = work / "none"
    empty.mkdir()
    r = run(attnbench, *GRID, "--no_table", "--peers=all", "--strategies=fused", "--json=n.json",
            env=env_for(str(empty)))
    assert r.returncode == 0, r.stderr
    built_peers = os.path.join(os.path.dirname(attnbench), "peers")
    if not (os.path.isdir(built_peers) and any(f.startswith("libattnbench_peer_") for f in os.listdir(built_peers))):
        assert "note: --peers=all: no peer library found in " + str(empty) in r.stderr, r.stderr


def test_peers_on_devices(attnbench, peer_dirs, work):
    # Two CPU workers: the same rows as one process, each from a worker; the crashing and hanging peers cost only
    # their rows (their own child processes), never a worker's other rows.
    env = env_for(peer_dirs["good"], peer_dirs["broken"], TMPDIR=str(work), ASAN_OPTIONS=no_segv_handler())
    args = [*TWO, "-q", "--no_table", "--plugin_timeout=3", "--peers=cpu-example,broken-crash,broken-hang"]
    one = run(attnbench, *args, "--json=one.json", env=env)
    two = run(attnbench, *args, "--devices=0,1", "--json=two.json", env=env)
    assert one.returncode == 1 and two.returncode == 1, (one.stderr[-2000:], two.stderr[-2000:])
    a, b = rows_of("one.json"), rows_of("two.json")
    key = lambda x: (json.dumps(x["problem"], sort_keys=True), x["strategy"], x["status"])
    assert [key(x) for x in a] == [key(x) for x in b]
    assert {x["device"] for x in b} == {0, 1}
    for x in b:
        assert (x["status"] == "failed") == x["strategy"].startswith("peer:broken"), x
    peer = by_strategy(b, "peer:cpu-example")
    assert len(peer) == 2 and all(x["verify"]["passed"] and x["library_version"] == "1.0.0-peer" for x in peer)
    assert not [p for p in os.listdir(work) if p.startswith("attnbench-")], os.listdir(work)


def test_peers_on_suites(attnbench, peer_dirs, work):
    # --peers with --config: a model's suite (narrowed to run on the CPU) and a second suite file.
    with open("small.json", "w") as f:
        json.dump({"name": "small", "grids": [{"batch": 1, "heads": 2, "seq_len": 24, "head_dim": 16}]}, f)
    r = run(attnbench, *FAST, "-q", "--config=llama3.1-8b-decode,small.json", "--batch=1", "--where=seq_len<=1024",
            "--peers=cpu-example", "--strategies=fused,peer:cpu-example", "--verify", "--json=s.json",
            env=env_for(peer_dirs["good"]))
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    rows = rows_of("s.json")
    problems = {json.dumps(x["problem"], sort_keys=True) for x in rows}
    peer = by_strategy(rows, "peer:cpu-example")
    assert len(problems) >= 2 and len(peer) == len(problems), (len(problems), len(peer))
    assert all(x["status"] == "ok" and x["verify"]["passed"] for x in peer), peer


def test_a_suite_names_its_peers(attnbench, peer_dirs, work):
    # A suite's "peers" load as --peers would (here with no --peers); --peers beside it replaces them; a peer the
    # suite names that is not found is one line naming the suite file; a malformed "peers" too.
    def suite(name, peers):
        with open(name, "w") as f:
            json.dump({"name": name, "peers": peers, "grids": [{"batch": 1, "heads": 2, "kv_heads": 1, "seq_len": [17, 40],
                                                                  "head_dim": 8}]}, f)
        return os.path.abspath(name)
    env = env_for(peer_dirs["good"])
    named = suite("named.json", ["cpu-example"])
    r = run(attnbench, *FAST, "-q", "--no_table", f"--config={named}", "--verify", "--json=s.json", env=env)
    assert r.returncode == 0, f"rc={r.returncode}: {r.stderr[-2000:]}"
    peer = by_strategy(rows_of("s.json"), "peer:cpu-example")
    assert len(peer) == 2 and all(x["status"] == "ok" and x["verify"]["passed"] for x in peer), peer
    everything = suite("all.json", "all")
    r = run(attnbench, *FAST, "-q", "--no_table", f"--config={everything}", "--strategies=fused,peer:cpu-example",
            "--json=a.json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(by_strategy(rows_of("a.json"), "peer:cpu-example")) == 2
    r = run(attnbench, *FAST, "-q", "--no_table", f"--config={named}", "--peers=none", "--json=n.json", env=env)
    assert r.returncode == 0 and not by_strategy(rows_of("n.json"), "peer:cpu-example"), r.stderr[-2000:]
    missing = suite("missing.json", ["nosuch"])
    expect_exit(2, f"config '{missing}': peers: no peer named 'nosuch' (found: cpu-example;", attnbench, *FAST,
                f"--config={missing}", env=env)
    for bad, needle in ((3, 'peers must be "all", "none" or a list of peer names'),
                        (["cpu-example", "cpu-example"], "'cpu-example' is listed twice"),
                        (["all"], "'all' stands alone")):
        path = suite("bad.json", bad)
        expect_exit(2, f"config '{path}': peers", attnbench, *FAST, f"--config={path}", env=env)
        expect_exit(2, needle, attnbench, *FAST, f"--config={path}", env=env)


def test_a_resume_runs_the_same_peers(attnbench, peer_dirs, work):
    # The journal records the peers loaded, by name: a resume with other peers is refused in one line (exit 2); the
    # same peers, named by --peers or by a suite, resume it.
    env = env_for(peer_dirs["good"])
    args = [*GRID, "-q", "--no_table", "--strategies=fused,peer:cpu-example", "--json=r.json", "--resume"]
    first = run(attnbench, *args, "--peers=cpu-example", env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert os.path.exists("r.json.journal")
    expect_exit(2, "belongs to another run: its peers differs (was cpu-example, now none)", attnbench,
                *[a for a in args if a != "--strategies=fused,peer:cpu-example"], "--strategies=fused", env=env)
    again = run(attnbench, *args, "--peers=all", env=env)  # all finds the same one peer
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.load(open("r.json"))["journal"]["resumed_problems"] == 4
    # tune --resume: the same rule.
    tune = ["tune", *FAST, "-q", "--heads=1", "--seq_len=16", "--head_dim=8", "--strategies=peer:cpu-example",
            "--cache=c.json", "--resume"]
    t = run(attnbench, *tune, "--peers=cpu-example", env=env)
    assert t.returncode == 0 and os.path.exists("c.json.journal"), t.stderr[-2000:]
    expect_exit(2, "its peers differs (was cpu-example, now none)", attnbench, *tune[:-3], "--strategies=fused",
                "--cache=c.json", "--resume", env=env)


def test_peers_continue_in_a_fresh_process(attnbench, peer_dirs, work):
    # A sticky fault in head_batched: the rest of the grid runs in a fresh process, which loads the same peers.
    r = run(attnbench, *GRID, "-q", "--no_table", "--peers=all", "--json=f.json",
            env=env_for(peer_dirs["good"], ATTNBENCH_INJECT_FAULT="head_batched"))
    assert r.returncode == 1, f"rc={r.returncode}: {r.stderr[-2000:]}"
    peer = by_strategy(rows_of("f.json"), "peer:cpu-example")
    assert len(peer) == 4 and all(x["status"] == "ok" for x in peer), peer


def test_tune_searches_a_peer(attnbench, peer_dirs, work):
    env = env_for(peer_dirs["good"])
    t = run(attnbench, "tune", *FAST, "-q", "--heads=1", "--seq_len=16,24", "--head_dim=8", "--peers=cpu-example",
            "--strategies=peer:cpu-example", "--cache=c.json", env=env)
    assert t.returncode == 0, f"rc={t.returncode}: {t.stderr[-2000:]}"
    entries = json.load(open("c.json"))["plugins"]
    assert len(entries) == 2 and {e["strategy"] for e in entries} == {"peer:cpu-example"}, entries
    r = run(attnbench, *FAST, "-q", "--heads=1", "--seq_len=16,24", "--head_dim=8", "--peers=cpu-example",
            "--strategies=peer:cpu-example", "--cache=c.json", "--json=r.json", env=env)
    assert r.returncode == 0, r.stderr
    assert all(x["config"]["source"] == "cache" for x in rows_of("r.json"))


def test_a_cache_entry_of_another_library_version_is_not_applied(attnbench, peer_dirs, work):
    # The tune records the peer's library version in each entry; a run of another version applies none of them and
    # says so (stderr and the report's warnings), as for entries of another environment; the same version applies
    # them; entries of a cache written before versions were recorded load and apply to any version.
    grid = [*FAST, "--heads=1", "--seq_len=16,24", "--head_dim=8", "--peers=cpu-example", "--strategies=peer:cpu-example"]
    t = run(attnbench, "tune", *grid, "-q", "--cache=c.json", env=env_for(peer_dirs["good"]))
    assert t.returncode == 0, f"rc={t.returncode}: {t.stderr[-2000:]}"
    cache = json.load(open("c.json"))
    assert len(cache["plugins"]) == 2 and all(e["library_version"] == "1.0.0-peer" for e in cache["plugins"]), cache
    line = ("2 cache entries of peer:cpu-example tuned with library version '1.0.0-peer', not the loaded '2.0.0-peer': "
            "not applied")
    v2 = run(attnbench, *grid, "--no_table", "--cache=c.json", "--json=v2.json", env=env_for(peer_dirs["v2"]))
    assert v2.returncode == 0, v2.stderr[-2000:]
    assert f"warning: {line}" in v2.stderr, v2.stderr
    doc = json.load(open("v2.json"))
    assert line in doc["warnings"], doc["warnings"]
    assert all(x["library_version"] == "2.0.0-peer" and x["config"]["source"] != "cache" for x in doc["results"]), doc
    v1 = run(attnbench, *grid, "-q", "--cache=c.json", "--json=v1.json", env=env_for(peer_dirs["good"]))
    assert v1.returncode == 0, v1.stderr[-2000:]
    assert all(x["config"]["source"] == "cache" for x in rows_of("v1.json"))
    assert not any("library version" in w for w in json.load(open("v1.json"))["warnings"])
    for e in cache["plugins"]:
        del e["library_version"]
    json.dump(cache, open("old.json", "w"))
    old = run(attnbench, *grid, "-q", "--cache=old.json", "--json=old-v2.json", env=env_for(peer_dirs["v2"]))
    assert old.returncode == 0, old.stderr[-2000:]
    assert all(x["config"]["source"] == "cache" for x in rows_of("old-v2.json"))


def test_list_shows_found_unavailable_and_missing_peers(attnbench, peer_dirs, work):
    env = env_for(peer_dirs["good"], peer_dirs["broken"], ASAN_OPTIONS=no_segv_handler())
    text = run(attnbench, "list", env=env)
    js = run(attnbench, "list", "--json=-", env=env)
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    peers = {p["name"]: p for p in json.loads(js.stdout)["peers"]}
    good = peers["cpu-example"]
    assert good["status"] == "found" and good["strategy"] == "peer:cpu-example" and good["version"] == "1.0.0-peer"
    assert good["configs"] == ["keys64", "keys16", "keys256"] and good["path"].endswith("libattnbench_peer_cpu-example.so")
    assert peers["cpu-unavailable"]["status"] == "unavailable"
    assert peers["cpu-unavailable"]["reason"] == "libexample.so.9 is not installed"
    assert peers["broken-entry_crash"]["status"] == "unavailable" and "crashed" in peers["broken-entry_crash"]["reason"]
    for name in ("cudnn", "flashinfer-decode", "flashinfer-prefill", "flashinfer-fa3"):  # the build's peers unseen
        p = peers[name]
        assert p["status"] == "missing", p
        if p["status"] == "missing":
            assert p["how"].startswith("scripts/fetch-peers.sh, then rebuild"), p
            assert re.search(rf"peer:{name} +not found \(.*\); to get it: scripts/fetch-peers.sh", text.stdout), text.stdout
    for name in ("torch-flash", "torch-cudnn", "torch-efficient", "torch-math"):
        assert peers[name]["status"] == "script" and "scripts/peer_torch.py" in peers[name]["how"], peers[name]
    assert re.search(r"peer:cpu-example +1\.0\.0-peer +\S+libattnbench_peer_cpu-example\.so +configs: keys64,keys16,keys256",
                     text.stdout), text.stdout
    assert re.search(r"peer:cpu-unavailable +unavailable +\S+ +libexample\.so\.9 is not installed", text.stdout), text.stdout


def test_compare_flags_a_changed_library_version(attnbench, peer_dirs, work):
    args = [*GRID, "-q", "--no_table", "--peers=cpu-example", "--strategies=fused,peer:cpu-example"]
    for name, d in (("v1.json", peer_dirs["good"]), ("v2.json", peer_dirs["v2"])):
        r = run(attnbench, *args, f"--json={name}", env=env_for(d))
        assert r.returncode == 0, r.stderr
    line = "library versions differ: peer:cpu-example is '1.0.0-peer' in the baseline and '2.0.0-peer' in the new run (4 rows)"
    c = run(attnbench, "compare", "v1.json", "v2.json")
    assert c.returncode in (0, 1) and f"warning: {line}" in c.stdout, (c.returncode, c.stdout)
    doc = json.loads(run(attnbench, "compare", "v1.json", "v2.json", "--json=-").stdout)
    assert any(w.startswith(line) for w in doc["warnings"]), doc["warnings"]
    peer_rows = [x for x in doc["rows"] if x["strategy"] == "peer:cpu-example"]
    assert len(peer_rows) == 4 and all(x["library_changed"] and x["base"]["library_version"] == "1.0.0-peer"
                                       and x["new"]["library_version"] == "2.0.0-peer" for x in peer_rows), peer_rows
    assert not any(x.get("library_changed") for x in doc["rows"] if x["strategy"] == "fused")
    md = run(attnbench, "compare", "v1.json", "v2.json", "--md=-")
    assert line in md.stdout, md.stdout
    csv_head, csv_row = run(attnbench, "compare", "v1.json", "v2.json", "--csv=-").stdout.splitlines()[:2]
    assert "base_library_version,new_library_version" in csv_head, csv_head
    # A changed version alone is no regression: the baseline's own times under the new version compare clean.
    doc1 = json.load(open("v1.json"))
    for x in doc1["results"]:
        if x["strategy"] == "peer:cpu-example":
            x["library_version"] = "2.0.0-peer"
    json.dump(doc1, open("v1-new-lib.json", "w"))
    same_times = run(attnbench, "compare", "v1.json", "v1-new-lib.json")
    assert same_times.returncode == 0 and f"warning: {line}" in same_times.stdout, same_times.stdout
    # The same version on both sides: no such line.
    same = run(attnbench, "compare", "v1.json", "v1.json")
    assert same.returncode == 0 and "library versions differ" not in same.stdout, same.stdout


def test_peers_resume_their_journal(attnbench, peer_dirs, work):
    # --resume with peers: a finished run's journal resumes every problem with its peer rows; the rows' children
    # (which keep no journal of the parent's) say nothing about one.
    args = [*GRID, "-q", "--no_table", "--peers=all", "--strategies=fused,peer:cpu-example", "--json=r.json", "--resume"]
    first = run(attnbench, *args, env=env_for(peer_dirs["good"]))
    again = run(attnbench, *args, env=env_for(peer_dirs["good"]))
    assert first.returncode == 0 and again.returncode == 0, (first.stderr[-2000:], again.stderr[-2000:])
    assert "row.json.journal" not in first.stderr + again.stderr, first.stderr + again.stderr
    doc = json.load(open("r.json"))
    assert doc["journal"]["resumed_problems"] == 4, doc.get("journal")
    peer = by_strategy(doc["results"], "peer:cpu-example")
    assert len(peer) == 4 and all(x["library_version"] == "1.0.0-peer" for x in peer), peer
