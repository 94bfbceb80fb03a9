"""Concurrent `tune` runs into one cache merge instead of losing entries (issue 16, finding 5): each trial
starts from a ~1 MB cache and runs six CPU tunes of different small problems at once into it; every entry
each tune found alone (and every entry already there) must be in the cache afterwards. The number of trials
is 3, or ATTNBENCH_TEST_TRIALS (the bash script's optional third argument)."""
import json
import os
import shutil
import subprocess

import pytest

from cli_helpers import run

TRIALS = int(os.environ.get("ATTNBENCH_TEST_TRIALS", "3"))
TUNE = ["tune", "--backend=cpu", "--quiet", "--batch=1", "--heads=1", "--head_dim=8", "--strategies=fused,head_batched",
        "--warmup=0", "--min_samples=1", "--max_time=0.05"]
LENS = [16, 24, 32, 40, 48, 56]


def keys(path):
    with open(path) as f:
        d = json.load(f)
    return {k + " " + e["env"] + " " + e["key"] for k in ("gemm", "fused") for e in d[k]}


@pytest.fixture(scope="module")
def seeded(attnbench, module_work):
    """What each tune finds alone, and a big starting cache (the real entries repeated under padded keys)."""
    for s in LENS:
        r = run(attnbench, *TUNE, f"--seq_len={s}", f"--cache=alone_{s}.json", cwd=module_work)
        assert r.returncode == 0, f"tune S={s} alone: {r.stderr[-2000:]}"
    d = json.load(open(module_work / "alone_16.json"))
    for kind in ("gemm", "fused"):
        d[kind] = d[kind] + [dict(e, key="%s-pad%d" % (e["key"], i)) for e in d[kind] for i in range(400)]
    with open(module_work / "seed.json", "w") as f:
        json.dump(d, f, indent=1)
    expected = set(keys(module_work / "seed.json"))
    for s in LENS:
        expected |= keys(module_work / f"alone_{s}.json")
    print(f"expected {len(expected)} entries, seed cache {os.path.getsize(module_work / 'seed.json')} bytes")
    return module_work, expected


@pytest.mark.parametrize("trial", range(1, TRIALS + 1))
def test_concurrent_tunes_lose_no_entry(attnbench, seeded, trial):
    folder, expected = seeded
    shutil.copyfile(folder / "seed.json", folder / "shared.json")
    procs = []
    for s in LENS:
        out = open(folder / f"out_{s}.txt", "w")
        procs.append(subprocess.Popen([attnbench, *TUNE, f"--seq_len={s}", "--cache=shared.json"], cwd=folder,
                                      stdout=out, stderr=subprocess.STDOUT))
        out.close()
    rcs = sum(p.wait(timeout=300) != 0 for p in procs)
    lost = expected - keys(folder / "shared.json")
    print(f"trial {trial}: {rcs} tune(s) failed, {len(lost)} of {len(expected)} entries lost")
    assert rcs == 0 and not lost, f"trial {trial} lost {len(lost)} entries ({rcs} tunes failed): {sorted(lost)[:5]}"
