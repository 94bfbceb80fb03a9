"""`cmake --install` into a temporary prefix, moved elsewhere (nothing absolute baked in), then used from another
folder: a suite found by name beside the installed binary (one that exists only there), the installed suites,
./configs, a missing suite's message naming every folder searched, the installed Python tools finding the
installed binary, and the Debian package from CPack (when dpkg-deb is there). The build tree is the binary's
folder. The tests run in order in one scratch folder."""
import json
import os
import re
import shutil
import subprocess

import pytest

from cli_helpers import expect_exit, run

INSTALLED = ["bin/attnbench", "share/attnbench/configs/ci.json", "share/attnbench/configs/llama3.1-8b-decode.json",
             "share/attnbench/scripts/plot_report.py", "share/attnbench/scripts/peer_torch.py",
             "share/attnbench/scripts/ci-perf.sh", "share/attnbench/scripts/check-schemas.py",
             "share/attnbench/schemas/report.schema.json", "share/attnbench/schemas/cache.schema.json",
             "share/attnbench/python/attnbench/plot.py",
             "share/doc/attnbench/README.md", "share/doc/attnbench/report-format.md"]
ONLY_INSTALLED = """{"name": "only-installed", "description": "a suite that exists only in the installed share folder",
 "grids": [{"batch": 1, "heads": 2, "seq_len": 40, "head_dim": 16, "pages": 3, "kv_layout": "paged"}]}
"""


@pytest.fixture(scope="module")
def build(attnbench):
    return os.path.dirname(attnbench)


@pytest.fixture(scope="module")
def prefix(build, module_work):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found: nothing to install with")
    r = run("cmake", "--install", build, "--prefix", module_work / "prefix")
    assert r.returncode == 0, f"cmake --install failed:\n{(r.stdout + r.stderr)[-3000:]}"
    return module_work / "prefix"


@pytest.mark.parametrize("path", INSTALLED)
def test_installed_file(prefix, path):
    assert (prefix / path).is_file(), f"install lacks {path}"


def test_installed_programs_executable(prefix):
    assert os.access(prefix / "bin/attnbench", os.X_OK) and \
        os.access(prefix / "share/attnbench/scripts/plot_report.py", os.X_OK), "installed programs not executable"


@pytest.fixture(scope="module")
def moved(prefix, module_work):
    """The prefix the package was installed to is gone: the search is relative to the binary. Returns the
    installed binary, the folder elsewhere that the tests run it from, and the moved prefix."""
    moved = module_work / "moved"
    shutil.move(prefix, moved)
    (moved / "share/attnbench/configs/only-installed.json").write_text(ONLY_INSTALLED)
    elsewhere = module_work / "elsewhere"
    elsewhere.mkdir()
    return str(moved / "bin/attnbench"), elsewhere, moved


@pytest.fixture
def inst(moved, monkeypatch):
    monkeypatch.chdir(moved[1])
    return moved[0]


def test_suite_by_name_from_another_folder(inst):
    r = run(inst, "--config=only-installed", "--backend=cpu", "--strategies=head_batched,fused", "--max_time=0.02",
            "-q", "--json=r.json")
    assert r.returncode == 0, f"installed binary cannot run a suite by name from another folder:\n{r.stdout + r.stderr}"


def test_suite_by_name_rows(inst):
    d = json.load(open("r.json"))
    assert len(d["results"]) == 2 and d["results"][0]["problem"]["seq_len"] == 40, \
        "the run of only-installed wrote the wrong rows"


def test_installed_ci_suite(inst):
    r = run(inst, "grid", "--config=ci", "--json=-")
    with open("ci-installed.json", "w") as f:
        f.write(r.stdout + r.stderr)
    assert r.returncode == 0, "grid --config=ci from the install"


def test_installed_ci_suite_is_the_source_trees(attnbench, src, inst):
    r = run(attnbench, "grid", f"--config={src}/configs/ci.json", "--json=-")
    assert open("ci-installed.json").read() == r.stdout + r.stderr, \
        "the installed ci suite differs from the source tree's"


def test_dot_configs_searched(inst, moved):
    os.mkdir("configs")
    shutil.copyfile(moved[2] / "share/attnbench/configs/only-installed.json", "configs/only-here.json")
    assert run(inst, "grid", "--config=only-here").returncode == 0, "./configs is not searched"


# The message names every folder searched.
@pytest.mark.parametrize("needle,args", [
    ("moved/share/attnbench/configs", ["--config=no-such-suite", "--backend=cpu"]),
    ("./configs", ["grid", "--config=no-such-suite"]),
])
def test_missing_suite_names_the_folders(inst, needle, args):
    expect_exit(2, needle, inst, *args)


def installed_tool(moved, script, *args):
    """Runs an installed Python tool as `env -u ATTNBENCH PATH=/usr/bin:/bin python3 ...`: the tool must find the
    installed binary with no $ATTNBENCH and nothing on the PATH."""
    env = {k: v for k, v in os.environ.items() if k != "ATTNBENCH"}
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(["python3", moved[2] / "share/attnbench/scripts" / script, *args], env=env,
                          capture_output=True, text=True, errors="replace", timeout=300)


def test_installed_peer_torch_finds_the_binary(inst, moved):
    # The installed Python tools find the installed binary (no $ATTNBENCH, not on the PATH).
    r = installed_tool(moved, "peer_torch.py", "--dry-run", "-q", "--config=only-installed", "--json=peer.json")
    assert r.returncode == 0, f"installed peer_torch.py:\n{r.stdout + r.stderr}"


def test_installed_tune_repro_finds_the_binary(inst, moved):
    r = installed_tool(moved, "tune_repro.py", "r.json", "r.json")
    assert r.returncode == 2 and "schema" in r.stdout + r.stderr, f"installed tune_repro.py:\n{r.stdout + r.stderr}"


def test_installed_check_schemas_reads_the_installed_schemas(inst, moved):
    # check-schemas.py finds the schemas installed beside it (share/attnbench/schemas) and validates a report.
    r = installed_tool(moved, "check-schemas.py", "--only", "r.json")
    if r.returncode == 2 and "jsonschema is not installed" in r.stderr:
        pytest.skip("python3-jsonschema is not installed")
    assert r.returncode == 0, f"installed check-schemas.py:\n{r.stdout + r.stderr}"


# The Debian package: the same tree under /usr.
@pytest.fixture(scope="module")
def deb(build, module_work):
    if shutil.which("dpkg-deb") is None or shutil.which("cpack") is None:
        pytest.skip("dpkg-deb or cpack not found: the Debian package is not built here")
    r = run("cpack", "-G", "DEB", "--config", os.path.join(build, "CPackConfig.cmake"), "-B", module_work / "deb",
            cwd=module_work)
    assert r.returncode == 0, f"cpack -G DEB failed:\n{(r.stdout + r.stderr)[-3000:]}"
    debs = sorted((module_work / "deb").glob("attnbench_*.deb"))
    assert debs, "cpack wrote no .deb"
    return str(debs[0])


@pytest.mark.parametrize("path", ["./usr/bin/attnbench", "./usr/share/attnbench/configs/ci.json",
                                  "./usr/share/doc/attnbench/README.md"])
def test_deb_contents(deb, path):
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    assert re.search(" " + re.escape(path) + "$", listing, re.M), f"the .deb lacks {path}"


def test_deb_fields(deb):
    fields = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Depends"], capture_output=True,
                            text=True).stdout
    assert re.search(r"^Package: attnbench", fields, re.M) and re.search(r"^Version: 0", fields, re.M), \
        f"deb fields: {fields}"
