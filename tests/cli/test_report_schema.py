"""The published JSON Schemas (schemas/report.schema.json, schemas/cache.schema.json) and their checker
(scripts/check-schemas.py): every committed report and cache validates; the reports and caches this binary
writes now validate, of every kind the CPU backend makes (verified rows with rounds and samples, paged GQA
decode, ragged batches, failed, unsupported and incorrect rows, an injected slowdown, --profile, plugin rows,
shards and their merge, several devices, an interrupted and a resumed run, peer_torch's reports, tune caches
with fused, decode and plugin entries, a merged cache); a deliberately broken report or cache fails, one line
per failure naming the file and the field.

Needs python3-jsonschema: skipped without it, unless ATTNBENCH_REQUIRE_PYTHON_PACKAGE is set (CI), where it
fails instead."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cli_helpers import run

CPU = ["--backend=cpu", "--quiet", "--max_time=0.01", "--min_samples=2"]
SMALL = ["--batch=1", "--heads=2", "--seq_len=32", "--head_dim=16"]


@pytest.fixture(scope="module", autouse=True)
def jsonschema_here():
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        if os.environ.get("ATTNBENCH_REQUIRE_PYTHON_PACKAGE"):
            pytest.fail("python3-jsonschema is missing and ATTNBENCH_REQUIRE_PYTHON_PACKAGE is set")
        pytest.skip("python3-jsonschema is not installed (scripts/install-deps.sh installs it)")


def check(src, *args):
    """scripts/check-schemas.py ARGS under this Python: (exit code, failure lines, summary)."""
    r = run(sys.executable, src / "scripts/check-schemas.py", *args)
    return r.returncode, r.stdout.splitlines(), r.stderr


def produce(attnbench, d, name, *args, env=None, rc=(0,)):
    r = run(attnbench, *args, env=env, cwd=d)
    assert r.returncode in rc, f"{name}: exit {r.returncode}: {r.stderr[-2000:]}"
    assert (d / name).exists(), f"{name} was not written"
    return name


def interrupted_and_resumed(attnbench, d):
    """A run stopped by SIGTERM once its first problem is in the journal (the report holds what finished,
    `interrupted`), then the same run resumed from the journal (`journal`)."""
    grid = [*CPU[:2], "--max_time=0.1", "--min_samples=2", "--batch=1", "--heads=2", "--seq_len=64:512:*2",
            "--head_dim=32", "--strategies=fused,head_batched", "--json=stopped.json"]
    journal = d / "stopped.json.journal"
    p = subprocess.Popen([attnbench, *grid], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 2:  # the header line, then a problem
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=120) == 143, "the run was not stopped by SIGTERM"
    os.replace(d / "stopped.json", d / "interrupted.json")
    produce(attnbench, d, "stopped.json", *grid, "--resume")
    os.replace(d / "stopped.json", d / "resumed.json")
    return ["interrupted.json", "resumed.json"]


@pytest.fixture(scope="module")
def fresh(attnbench, src, plugins, tmp_path_factory):
    """A folder of reports and caches of every kind this binary writes on the CPU backend (and peer_torch's)."""
    d = tmp_path_factory.mktemp("fresh")
    made = [
        produce(attnbench, d, "basic.json", *CPU, *SMALL, "--verify", "--rounds=2", "--samples", "--json=basic.json"),
        produce(attnbench, d, "decode.json", *CPU, "--batch=1,2", "--heads=4", "--kv_heads=2", "--seq_len=40",
                "--q_len=1,3", "--head_dim=16", "--pages=3", "--kv_layout=paged", "--causal", "--dtype=bf16", "--verify",
                "--json=decode.json"),
        produce(attnbench, d, "ragged.json", *CPU, "--batch=3", "--heads=2", "--kv_lens=list:7,20,33;uniform:8:40:2",
                "--q_len=4", "--head_dim=16", "--page_size=8", "--verify", "--json=ragged.json"),
        produce(attnbench, d, "fault.json", *CPU, "--batch=1", "--heads=2", "--seq_len=32,48", "--head_dim=16", "--verify",
                "--json=fault.json", env={"ATTNBENCH_INJECT_FAULT": "head_batched"}, rc=(1,)),
        produce(attnbench, d, "unsupported.json", *CPU, "--batch=1", "--heads=2", "--seq_len=16", "--head_dim=24,512",
                "--json=unsupported.json"),
        produce(attnbench, d, "slowed.json", *CPU, *SMALL, "--rounds=3", "--strategies=fused,nested", "--json=slowed.json",
                env={"ATTNBENCH_INJECT_SLOWDOWN": "fused=10%"}),
        produce(attnbench, d, "profile.json", *CPU, *SMALL, "--strategies=fused", "--tile=m64n64w4s2", "--profile",
                "--json=profile.json"),
        produce(attnbench, d, "devices.json", *CPU, "--batch=1,2", *SMALL[1:], "--devices=0,1", "--json=devices.json"),
    ]
    for i in (0, 1):
        made.append(produce(attnbench, d, f"s{i}.json", *CPU, "--batch=1,2", "--heads=2", "--seq_len=16,24",
                            "--head_dim=16", f"--shard={i}/2", f"--json=s{i}.json"))
    made.append(produce(attnbench, d, "merged.json", "merge", "--json=merged.json", "s0.json", "s1.json"))
    caches = [produce(attnbench, d, "cache.json", "tune", *CPU, *SMALL, "--strategies=head_batched,fused",
                      "--cache=cache.json", "--json=tune-summary.json"),
              produce(attnbench, d, "decode-cache.json", "tune", *CPU, "--batch=1", "--heads=4", "--kv_heads=1",
                      "--q_len=1", "--seq_len=48", "--head_dim=16", "--pages=2", "--kv_layout=paged",
                      "--strategies=fused,ptr_array", "--cache=decode-cache.json")]
    example = plugins / "libcpu_example_plugin.so"
    if example.exists():  # plugin rows (ok, and incorrect from a deliberately wrong plugin) and a plugin's cache
        made.append(produce(attnbench, d, "plugin.json", *CPU, *SMALL, f"--plugin={example}", "--verify",
                            "--json=plugin.json"))
        made.append(produce(attnbench, d, "wrong.json", *CPU, *SMALL, f"--plugin={plugins / 'libbroken_wrong.so'}",
                            "--strategies=plugin:broken-wrong,fused", "--verify", "--json=wrong.json", rc=(1,)))
        caches.append(produce(attnbench, d, "plugin-cache.json", "tune", *CPU, *SMALL, f"--plugin={example}",
                              "--strategies=plugin:cpu-example", "--cache=plugin-cache.json"))
    made += caches
    made.append(produce(attnbench, d, "merged-cache.json", "merge", "--json=merged-cache.json", *caches))
    made.append(produce(attnbench, d, "cached.json", *CPU, *SMALL, "--strategies=head_batched,fused",
                        "--cache=merged-cache.json", "--json=cached.json"))
    made += interrupted_and_resumed(attnbench, d)

    # peer_torch's reports: a dry run of its own (device backend "none"), and peer rows merged into a report.
    peer = [sys.executable, str(src / "scripts/peer_torch.py"), "--dry-run", "-q"]
    env = {"ATTNBENCH": attnbench}
    r = run(*peer, "--batch=1,2", "--heads=4", "--kv_heads=1", "--q_len=1", "--seq_len=64", "--head_dim=32", "--json",
            "peer.json", env=env, cwd=d)
    assert r.returncode == 0, r.stderr
    (d / "peer-merged.json").write_text((d / "ragged.json").read_text())
    r = run(*peer, "--merge", "peer-merged.json", env=env, cwd=d)
    assert r.returncode == 0, r.stderr
    made += ["peer.json", "peer-merged.json"]
    return d, made


def test_every_committed_report_and_cache_validates(src, work):
    rc, failures, summary = check(src)
    assert rc == 0 and not failures, "\n".join(failures[:40]) + summary
    assert "report(s) valid" in summary and " 0 failure(s)" in summary, summary


def test_fresh_reports_and_caches_validate(src, fresh):
    d, made = fresh
    docs = {name: json.loads((d / name).read_text()) for name in made}
    kinds = {name: doc["schema"] for name, doc in docs.items()}
    assert set(kinds.values()) == {"attnbench.report/1", "attnbench.cache/1"}, kinds
    # The kinds are what they claim to be.
    statuses = {r["status"] for name, doc in docs.items() if kinds[name] == "attnbench.report/1" for r in doc["results"]}
    assert {"ok", "failed", "unsupported"} <= statuses, statuses
    assert docs["interrupted.json"]["interrupted"] == "SIGTERM"
    assert docs["resumed.json"]["journal"]["complete"] is True
    assert "shard" in docs["s1.json"] and "merged_from" in docs["merged.json"]
    assert docs["peer.json"]["device"]["backend"] == "none" and "peers" in docs["peer-merged.json"]
    assert any("kv_lens_values" in r["problem"] for r in docs["ragged.json"]["results"])
    if "plugin-cache.json" in docs:
        assert docs["plugin-cache.json"]["plugins"], docs["plugin-cache.json"]
    assert any(e["problem"].get("q_len") == 1 for e in docs["decode-cache.json"]["fused"])
    rc, failures, summary = check(src, "--only", *[str(d / n) for n in made])
    assert rc == 0 and not failures, "\n".join(failures[:40]) + summary
    # A folder: the tune summary in it (neither a report nor a cache) is skipped and named.
    rc, failures, summary = check(src, "--only", str(d))
    assert rc == 0 and not failures, "\n".join(failures[:40])
    assert "tune-summary.json" in summary and "skipped" in summary, summary


def at(*path):
    """A change that sets or (value DROP) removes the field at `path`; a path item ("status", X) is the first row
    of that status. Returns the field's place as the checker names it."""
    def change(doc, value):
        x, shown = doc, ""
        for k in path[:-1]:
            if isinstance(k, tuple):
                k = next(i for i, r in enumerate(x) if r.get(k[0]) == k[1])
            shown += f"[{k}]" if isinstance(k, int) else (f".{k}" if shown else k)
            x = x[k]
        if value is DROP:
            del x[path[-1]]
            return shown or "(document)"
        x[path[-1]] = value
        return shown + (f"[{path[-1]}]" if isinstance(path[-1], int) else f".{path[-1]}" if shown else path[-1])
    return change


DROP = object()
BROKEN = [  # (file, change, value): the field the checker must name is where the change was made
    ("basic.json", at("results", 0, "status"), "great"),
    ("basic.json", at("results", 1, "problem", "causal"), "yes"),
    ("basic.json", at("results", 0, "problem", "dtype"), "fp8"),
    ("basic.json", at("results", 2, "time_ms", "samples"), 2.5),
    ("basic.json", at("results", 0, "speedup"), 2),  # a row field the format does not have
    ("basic.json", at("results", 0, "strategy"), DROP),
    ("basic.json", at("results"), DROP),
    ("basic.json", at("settings", "timer"), "stopwatch"),
    ("basic.json", at("tool", "git"), DROP),
    ("unsupported.json", at("results", ("status", "unsupported"), "time_ms"), {"median": 1.0, "samples": 1}),
    ("fault.json", at("results", ("status", "failed"), "reason"), ""),
    ("ragged.json", at("results", 0, "problem", "kv_lens_values"), DROP),
    ("cache.json", at("gemm", 0, "best_ms"), -1),
    ("cache.json", at("environments", 0, "id"), "env-XYZ"),
    ("cache.json", at("fused", 0, "tile", "warps"), 0),
    ("cache.json", at("gemm", 0, "algo", "blob"), "not hex"),
    ("cache.json", at("fused", 0, "extra"), 1),
]


@pytest.mark.parametrize("case", range(len(BROKEN)), ids=[f"{n}:{i}" for i, (n, _, _) in enumerate(BROKEN)])
def test_a_broken_file_fails_naming_the_field(src, fresh, case):
    d, _ = fresh
    name, change, value = BROKEN[case]
    doc = json.loads((d / name).read_text())
    field = change(doc, value)
    path = d / f"broken-{case}-{name}"
    path.write_text(json.dumps(doc))
    rc, failures, summary = check(src, "--only", str(path))
    assert rc == 1 and failures, f"a broken {name} ({field}) validated: {summary}"
    assert all(line.startswith(f"{path}: ") for line in failures), failures
    # The place named is the field, or the object that holds it (a missing or an unknown field is the object's).
    places = [line[len(f"{path}: "):].split(": ", 1)[0] for line in failures]
    assert any(p == field or field.startswith(p + ".") or field.startswith(p + "[") for p in places), (field, failures)


def test_another_schema_version_is_not_a_report(src, fresh):
    d, _ = fresh
    doc = json.loads((d / "basic.json").read_text())
    doc["schema"] = "attnbench.report/2"
    (d / "v2.json").write_text(json.dumps(doc))
    rc, failures, _ = check(src, "--only", str(d / "v2.json"))
    assert rc == 1 and len(failures) == 1 and "not an attnbench report or cache" in failures[0], failures
    (d / "v2.json").unlink()


def test_a_named_file_of_another_kind_fails_and_a_committed_one_is_skipped(src, fresh):
    d, _ = fresh
    rc, failures, _ = check(src, "--only", str(d / "tune-summary.json"))
    assert rc == 1 and len(failures) == 1 and "not an attnbench report or cache" in failures[0], failures
    rc, failures, summary = check(src)  # tests/data holds suites: skipped, named
    assert rc == 0 and "small-suite.json" in summary, summary


def test_the_schemas_are_valid_draft_2020_12(src):
    import jsonschema
    for name in ("report.schema.json", "cache.schema.json"):
        with open(src / "schemas" / name) as f:
            schema = json.load(f)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)
